import { describe, expect, it } from 'vitest';
import { guardedConnect } from './connect.ts';
import { AdapterError } from './errors.ts';
import { adapterFor } from './index.ts';
import { ADAPTERS, type AdapterPool, type ConnectionConfig } from './types.ts';

const config = (over: Partial<ConnectionConfig> = {}): ConnectionConfig => ({
  adapter: 'postgres',
  hostname: 'h',
  port: 1,
  database: 'd',
  username: 'u',
  password: 'hunter2',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: null,
  ...over,
});

async function allFail(pool: AdapterPool, pattern: RegExp): Promise<void> {
  for (const call of [
    () => pool.check(),
    () => pool.execute('select 1', [], { maxRows: 1, timeoutSeconds: 1 }),
    () => pool.readSchema(),
  ]) {
    const err = await call().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdapterError);
    expect((err as AdapterError).kind).toBe('config');
    expect((err as AdapterError).message).toMatch(pattern);
  }
  await pool.close();
}

describe('guardedConnect: an unusable config fails on use, like a connection error', () => {
  it('refuses another engine’s config', async () => {
    await allFail(
      guardedConnect('mysql', config(), () => expect.unreachable()),
      /not a mysql config: postgres/,
    );
  });

  it('refuses inconsistent SSL settings without opening anything, on every engine', async () => {
    const ssl = {
      enabled: true,
      caCert: null,
      verifyServerHostname: true,
      clientCert: null,
      clientKey: null,
    };
    for (const name of ADAPTERS)
      await allFail(adapterFor(name).connect(config({ adapter: name, ssl })), /requires a CA/);
  });

  it('refuses unreadable TLS material and keeps secrets out of the message', async () => {
    const key = '-----BEGIN PRIVATE KEY-----\nhunter2\n-----END PRIVATE KEY-----\n';
    const ssl = { enabled: true, caCert: null, verifyServerHostname: false, clientCert: key, clientKey: key };
    const pool = guardedConnect('postgres', config({ ssl }), () => expect.unreachable());
    const err = (await pool.check().catch((e: unknown) => e)) as AdapterError;
    expect(err.message).toMatch(/could not be used/);
    expect(err.message).not.toContain('hunter2');
  });

  it('turns a config error thrown while opening into the same failing pool', async () => {
    const pool = guardedConnect('oracle', config({ adapter: 'oracle' }), () => {
      throw new AdapterError('not a valid Oracle service name: x?y', 'config');
    });
    await allFail(pool, /service name/);
  });
});
