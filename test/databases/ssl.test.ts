import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// SPEC.md 2.2 `ssl` / `verify_server_hostname`, end to end: register a database through the API
// with each SSL setting, then ask check-connection what the real server says.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

const b64 = (pem: string) => Buffer.from(pem).toString('base64');

async function check(
  engine: 'postgres' | 'mariadb',
  settings: Record<string, unknown>,
  as?: 'cert',
): Promise<string> {
  const s = servers()[engine];
  const username = as === 'cert' ? s.certUser : s.user;
  const created = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `${engine}-ssl`,
      adapter: engine === 'postgres' ? 'postgres' : 'mysql',
      hostname: s.tls.rightHostname,
      port: s.port,
      database: s.database,
      credentials: [{ username, password: as === 'cert' ? '' : s.password }],
      ...settings,
    }),
  });
  expect(created.status).toBe(201);
  const db = (await created.json()) as { id: string };
  const res = await svc.fetch(`/api/v1/desk/databases/${db.id}/check-connection/${username}`, {
    headers: { 'x-api-key': svc.apiKey },
  });
  expect(res.status).toBe(200);
  return res.text();
}

for (const engine of ['postgres', 'mariadb'] as const) {
  describe(`SSL modes against the real ${engine} server`, () => {
    const tls = () => servers()[engine].tls;

    it('ssl off connects', async () => {
      expect(await check(engine, { ssl: false })).toBe('ok');
    });

    it('ssl without a CA encrypts without verifying', async () => {
      expect(await check(engine, { ssl: true })).toBe('ok');
    });

    it('ssl with the right CA verifies the chain', async () => {
      expect(await check(engine, { ssl: true, ssl_ca_cert: b64(tls().caCert) })).toBe('ok');
    });

    it('a CA that did not sign the server certificate fails', async () => {
      const answer = await check(engine, { ssl: true, ssl_ca_cert: b64(tls().otherCaCert) });
      expect(answer).not.toBe('ok');
      expect(answer.toLowerCase()).toMatch(/certificate|ssl|handshake/);
    });

    it('verify_server_hostname passes for the name in the certificate', async () => {
      expect(
        await check(engine, { ssl: true, ssl_ca_cert: b64(tls().caCert), verify_server_hostname: true }),
      ).toBe('ok');
    });

    it('verify_server_hostname fails for another name of the same server', async () => {
      const answer = await check(engine, {
        ssl: true,
        ssl_ca_cert: b64(tls().caCert),
        verify_server_hostname: true,
        hostname: tls().wrongHostname,
      });
      expect(answer).not.toBe('ok');
      expect(answer).toMatch(/altnames|hostname|does not match|IP/i);
    });

    it('without verify_server_hostname the same wrong name is accepted (chain still verified)', async () => {
      expect(
        await check(engine, { ssl: true, ssl_ca_cert: b64(tls().caCert), hostname: tls().wrongHostname }),
      ).toBe('ok');
    });

    it('a client certificate logs in the certificate user', async () => {
      const answer = await check(
        engine,
        {
          ssl: true,
          ssl_ca_cert: b64(tls().caCert),
          ssl_cert: b64(tls().clientCert),
          ssl_key: b64(tls().clientKey),
        },
        'cert',
      );
      expect(answer).toBe('ok');
    });

    it('the certificate user without a client certificate is refused by the server', async () => {
      expect(await check(engine, { ssl: true, ssl_ca_cert: b64(tls().caCert) }, 'cert')).not.toBe('ok');
    });
  });
}
