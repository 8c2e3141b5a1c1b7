// Every connection the service opens for someone else goes through one network policy
// (core/outbound/policy.ts), and no connect failure can end the process. The services under test
// run inside a network namespace (outbound-net.ts), so even a regression sends nothing off this
// machine: the private, loopback and "public" addresses used here are the namespace's own or
// this test's peers on the veth link.

import { rmSync } from 'node:fs';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { netnsProblem } from '../agents/netns.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { until } from '../helpers/processes.ts';
import { makeCert, type NsService, type OutboundNet, startOutboundNet } from './outbound-net.ts';

const problem = netnsProblem();
const REDIRECT = 'http://127.0.0.1:40000/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

let net: OutboundNet;
let strict: NsService;
let allowing: NsService;
const stores: TestStore[] = [];
const certs: string[] = [];
const apiKeys = new Map<NsService, string>();
let receiverPort: number;
const received: string[] = [];
/** Hits on the trusted TLS peer, per "port path". */
const docHits: string[] = [];
let temporalPort: number;
let uiPort: number;

/** The environment of a service in the namespace with its own store and task queue. */
async function serviceEnv(
  extra: Record<string, string>,
): Promise<{ env: Record<string, string>; apiKey: string }> {
  const store = await createTestStore();
  stores.push(store);
  const storePort = await net.forward(Number(new URL(store.url).port));
  const storeUrl = new URL(store.url);
  storeUrl.hostname = net.hostIp;
  storeUrl.port = String(storePort);
  const apiKey = mintSecret('cskey', newId('key')).secret;
  const t = servers().temporal;
  return {
    apiKey,
    env: {
      DATABASE_URL: storeUrl.toString(),
      TEMPORAL_ADDRESS: `${net.hostIp}:${temporalPort}`,
      TEMPORAL_UI_URL: `http://${net.hostIp}:${uiPort}`,
      TEMPORAL_NAMESPACE: t.namespace,
      TEMPORAL_TASK_QUEUE: `outbound-${newId('run').slice(-10).toLowerCase()}`,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      COUNTERSIGN_API_KEY: apiKey,
      COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
      COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
      ...extra,
    },
  };
}

/** Peers on the host end of the link: what each failure mode looks like from the service. */
async function startPeers(): Promise<{ trustedCa: string }> {
  const http = await import('node:http');
  const httpReceiver = http.createServer((req, res) => {
    received.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  net.own(httpReceiver);
  await new Promise<void>((r) => httpReceiver.listen(0, net.hostIp, r));
  receiverPort = (httpReceiver.address() as { port: number }).port;
  // Resets every connection at once (RST): ECONNRESET on the service's side.
  const reset = createTcp((s: Socket) => s.resetAndDestroy());
  // Accepts and never answers: the fetch's deadline must end it.
  const silent = createTcp(() => {});
  for (const [server, n] of [
    [reset, 3],
    [silent, 5],
  ] as const) {
    net.own(server);
    await new Promise<void>((r) => server.listen(443, net.peerIp(n), r));
  }
  // A certificate no CA the service trusts signed: the TLS handshake fails.
  const untrusted = makeCert(['tls.test']);
  // docs.test's certificate, whose CA the allowing service trusts (OAUTH_CIMD_CA_FILE).
  const trusted = makeCert(['docs.test']);
  certs.push(untrusted.dir, trusted.dir);
  const tlsPeer = createHttps({ cert: untrusted.cert, key: untrusted.key }, (_req, res) => res.end('{}'));
  net.own(tlsPeer);
  await new Promise<void>((r) => tlsPeer.listen(443, net.peerIp(4), r));
  for (const port of [443, 8443]) {
    const docs = createHttps({ cert: trusted.cert, key: trusted.key }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://docs.test').pathname;
      docHits.push(`${port} ${path}`);
      const origin = port === 443 ? 'https://docs.test' : `https://docs.test:${port}`;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ client_id: `${origin}${path}`, client_name: 'Docs', redirect_uris: [REDIRECT] }),
        );
    });
    net.own(docs);
    await new Promise<void>((r) => docs.listen(port, net.peerIp(6), r));
  }
  return { trustedCa: trusted.caFile };
}

beforeAll(async () => {
  if (problem) return;
  net = await startOutboundNet();
  const t = servers().temporal;
  temporalPort = await net.forward(Number(t.address.split(':').pop()));
  uiPort = await net.forward(t.uiPort);
  const { trustedCa } = await startPeers();
  net.hosts(hosts());
  const cimdNames = 'unreach6.test,unreach4.test,refused.test,reset.test,tls.test,slow.test,nothere.test';
  const a = await serviceEnv({ OAUTH_CIMD_ALLOW_HOSTS: cimdNames });
  const b = await serviceEnv({
    OAUTH_CIMD_ALLOW_HOSTS: 'docs.test',
    OAUTH_CIMD_CA_FILE: trustedCa,
    // The operator's list: one host by name, the link's range, the service itself and the Temporal
    // UI by exact address. The Temporal frontend is inside the range but not listed exactly.
    COUNTERSIGN_OUTBOUND_ALLOW: `private.test,${net.peerIp(0)}/29,127.0.0.1,${net.hostIp}:${uiPort}`,
  });
  [strict, allowing] = await Promise.all([net.serve(a.env, 3000), net.serve(b.env, 3001)]);
  apiKeys.set(strict, a.apiKey);
  apiKeys.set(allowing, b.apiKey);
}, 240_000);

afterAll(async () => {
  await net?.stop();
  for (const s of stores) await s.drop();
  for (const d of certs) rmSync(d, { recursive: true, force: true });
}, 60_000);

/** The namespace's /etc/hosts; `rebind` is where rebind.test points. */
function hosts(rebind = '203.0.114.7'): Record<string, string> {
  return {
    // No route from the namespace to either: the connect fails at once (ENETUNREACH).
    'unreach6.test': '2001:db8::1',
    'unreach4.test': '192.0.2.1',
    // Nothing listens on 443 on the namespace's loopback: ECONNREFUSED.
    'refused.test': '127.0.0.1',
    'reset.test': net.peerIp(3),
    'tls.test': net.peerIp(4),
    'slow.test': net.peerIp(5),
    'docs.test': net.peerIp(6),
    'private.test': net.hostIp,
    // A public address (never connected to: the namespace has no route to it).
    'rebind.test': rebind,
  };
}

function authorizeUrl(svc: NsService, clientId: string, over: Record<string, string> = {}): string {
  return `${svc.url}/oauth/authorize?${new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's',
    ...over,
  })}`;
}

async function api(svc: NsService, method: string, path: string, body?: unknown) {
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers: { 'x-api-key': apiKeys.get(svc)!, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // the run endpoint answers with text
  }
  return { status: res.status, text, body: parsed };
}

const apiStep = (endpoint: string) => ({
  name: `call ${newId('run').slice(-6)}`,
  steps: [{ name: 'call', action: { __type__: 'api', endpoint } }],
});

/** Saves the workflow and runs it; how the run ended and its error. */
async function run(
  svc: NsService,
  wf: Record<string, unknown>,
  inputs: Record<string, unknown> = {},
): Promise<{ status: string; error: string | null }> {
  const created = await api(svc, 'POST', '/api/v1/workflows', wf);
  expect(created.status, created.text).toBe(201);
  const id = created.body!.id as string;
  const started = await api(svc, 'POST', `/api/v1/workflows/${id}/run`, inputs);
  expect(started.status, started.text).toBe(200);
  const runId = /run_[0-9A-Z]{26}/.exec(started.text)![0];
  return until(
    'the run to end',
    async () => {
      const r = await api(svc, 'GET', `/api/v1/workflows/${id}/runs/${runId}`);
      const status = r.body!.status as string;
      return status === 'running' ? undefined : { status, error: (r.body!.error as string | null) ?? null };
    },
    60_000,
  );
}

describe.skipIf(problem)('metadata documents: every connect failure is an ordinary refusal', () => {
  it.each([
    ['unreachable over IPv6 (no route)', 'unreach6.test', /could not be reached over https/],
    ['unreachable over IPv4 (no route)', 'unreach4.test', /could not be reached over https/],
    ['connection refused', 'refused.test', /could not be reached over https/],
    ['connection reset', 'reset.test', /could not be reached over https/],
    ['TLS failure (untrusted certificate)', 'tls.test', /could not be reached over https/],
    ['no answer (timeout)', 'slow.test', /did not answer within 5 seconds/],
    ['DNS failure', 'nothere.test', /host name does not resolve/],
  ])(
    '%s: an error page, and the process keeps serving',
    async (_what, host, why) => {
      const res = await fetch(authorizeUrl(strict, `https://${host}/client.json`));
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain('metadata document cannot be used');
      expect(html).toMatch(why);
      expect(strict.alive()).toBe(true);
      expect((await fetch(`${strict.url}/healthz`)).status).toBe(200);
    },
    20_000,
  );

  it('is fetched from port 443 only, even from a host the operator exempts', async () => {
    const other = await fetch(authorizeUrl(allowing, 'https://docs.test:8443/other-port.json'));
    expect(other.status).toBe(400);
    expect(await other.text()).toMatch(/not served on the https port 443/);
    expect(docHits).not.toContain('8443 /other-port.json');
    // The same document on 443 is fetched and used: the next step is signing in.
    const usual = await fetch(authorizeUrl(allowing, 'https://docs.test/usual-port.json'), {
      redirect: 'manual',
    });
    expect(usual.status).toBe(302);
    expect(usual.headers.get('location')).toMatch(/^\/login\?next=/);
    expect(docHits).toContain('443 /usual-port.json');
  });
});

describe.skipIf(problem)('api steps: the control plane and private networks are refused', () => {
  const targets = () => ({
    loopback: `http://127.0.0.1:${strict.port}/healthz`,
    private: `http://${net.hostIp}:${receiverPort}/private`,
    'a name resolving to a private address': `http://private.test:${receiverPort}/by-name`,
    'the Temporal frontend': `http://${net.hostIp}:${temporalPort}/`,
    'the Temporal UI': `http://${net.hostIp}:${uiPort}/`,
    'link-local metadata': 'http://169.254.169.254/latest/meta-data/',
    CGNAT: 'http://100.64.1.1/',
    'unique local IPv6': 'http://[fd12:3456::1]/',
    'IPv4-mapped loopback': 'http://[::ffff:127.0.0.1]/',
    unspecified: 'http://0.0.0.0/',
  });

  it('refuses each at save with 422 naming the field', async () => {
    for (const [what, endpoint] of Object.entries(targets())) {
      const res = await api(strict, 'POST', '/api/v1/workflows', {
        name: 'refused',
        steps: [
          { name: 'first', action: { __type__: 'condition', expression: '1 == 1' } },
          { name: 'call', action: { __type__: 'api', endpoint } },
        ],
      });
      expect(res.status, what).toBe(422);
      expect(res.body!.errors, what).toEqual([
        { path: 'steps.1.action.endpoint', message: expect.stringMatching(/refused by the network policy/) },
      ]);
    }
    expect(received).toEqual([]);
  });

  it('refuses at run time what was not refusable at save: a templated host, a name that changed', async () => {
    const templated = await run(
      strict,
      {
        ...apiStep(`http://\${h}:${receiverPort}/templated`),
        inputs: [{ key: 'h', description: 'host', type: 'string' }],
      },
      { h: net.hostIp },
    );
    expect(templated.status).toBe('failed');
    expect(templated.error).toMatch(/refused/);
    // rebind.test named a public address when the workflow was saved; now it names a private one.
    const created = await api(
      strict,
      'POST',
      '/api/v1/workflows',
      apiStep(`http://rebind.test:${receiverPort}/rebound`),
    );
    expect(created.status, created.text).toBe(201);
    net.hosts(hosts(net.hostIp));
    try {
      const id = created.body!.id as string;
      const started = await api(strict, 'POST', `/api/v1/workflows/${id}/run`, {});
      const runId = /run_[0-9A-Z]{26}/.exec(started.text)![0];
      const ended = await until('the run to end', async () => {
        const r = await api(strict, 'GET', `/api/v1/workflows/${id}/runs/${runId}`);
        return r.body!.status === 'running' ? undefined : r.body!;
      });
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatch(/refused/);
    } finally {
      net.hosts(hosts());
    }
    expect(received).toEqual([]);
  }, 90_000);

  it('reaches what the operator listed, and only that', async () => {
    for (const endpoint of [
      `http://${net.hostIp}:${receiverPort}/listed-range`,
      `http://private.test:${receiverPort}/listed-name`,
      `http://127.0.0.1:${allowing.port}/healthz`,
      `http://${net.hostIp}:${uiPort}/`,
    ]) {
      const ended = await run(allowing, apiStep(endpoint));
      expect(ended, endpoint).toEqual({ status: 'succeeded', error: null });
    }
    expect(received).toEqual(['/listed-range', '/listed-name']);
    // Inside the listed range, but the Temporal frontend is only reachable when listed exactly.
    const frontend = await api(
      allowing,
      'POST',
      '/api/v1/workflows',
      apiStep(`http://${net.hostIp}:${temporalPort}/`),
    );
    expect(frontend.status).toBe(422);
    expect(JSON.stringify(frontend.body)).toMatch(/the service itself or its Temporal server/);
  }, 120_000);
});
