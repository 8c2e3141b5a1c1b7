// Body-size limits on every public POST (413 before parsing) and failure
// limits on sign-in, the token endpoint and registration (429 with Retry-After), counted in the
// store; the `__Host-` cookie under https.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPerson, startTestService, type TestService } from '../helpers/service.ts';
import { discover, REDIRECT, register, tokenRequest } from '../oauth/flow.ts';

let svc: TestService;
const person = { email: 'limits-person@example.test', password: 'person password 123' };

beforeAll(async () => {
  svc = await startTestService({
    env: {
      RATE_LIMIT_ACCOUNT_FAILURES: '3',
      RATE_LIMIT_ADDRESS_FAILURES: '12',
      OAUTH_REGISTRATIONS_PER_ADDRESS: '10',
    },
  });
  await addPerson(svc, person);
});
afterAll(async () => svc?.stop());

describe('body-size limits', () => {
  const big = 'x'.repeat(64 * 1024);
  const posts: Array<[string, string]> = [
    ['/login', 'application/x-www-form-urlencoded'],
    ['/logout', 'application/x-www-form-urlencoded'],
    ['/oauth/token', 'application/x-www-form-urlencoded'],
    ['/oauth/revoke', 'application/x-www-form-urlencoded'],
    ['/oauth/register', 'application/json'],
    ['/oauth/authorize', 'application/x-www-form-urlencoded'],
    ['/settings/password', 'application/x-www-form-urlencoded'],
  ];
  for (const [path, type] of posts) {
    it(`POST ${path} with 64 KB answers 413`, async () => {
      const res = await svc.fetch(path, { method: 'POST', headers: { 'content-type': type }, body: big });
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    });
  }

  it('a chunked body without Content-Length is cut off at the limit too', async () => {
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 64; i++) controller.enqueue(new TextEncoder().encode('a'.repeat(1024)));
        controller.close();
      },
    });
    const res = await svc.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('the REST API takes up to 1 MB and refuses more', async () => {
    const res = await svc.fetch('/api/v1/workflows', {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(1100 * 1024) }),
    });
    expect(res.status).toBe(413);
  });

  it('a normal sign-in still works', async () => {
    const res = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: svc.admin.email, password: svc.admin.password, next: '/' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
  });
});

describe('failure limits', () => {
  it('sign-in: after 3 wrong passwords the account answers 429 with Retry-After, even to the right one', async () => {
    const attempt = (password: string) =>
      svc.fetch('/login', {
        method: 'POST',
        body: new URLSearchParams({ email: person.email, password, next: '/' }),
        redirect: 'manual',
      });
    for (let i = 0; i < 3; i++) expect((await attempt('wrong password')).status).toBe(401);
    const limited = await attempt(person.password);
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(900);
    // Another account is not locked by it.
    const other = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: svc.admin.email, password: svc.admin.password, next: '/' }),
      redirect: 'manual',
    });
    expect(other.status).toBe(303);
    // Counted in the store (shared by replicas), and not by email in clear.
    const rows = await svc.deps.sql<{ bucket: string }[]>`select bucket from rate_limits`;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.bucket.includes(person.email))).toBe(false);
  });

  it('token endpoint: after 3 failed exchanges for a client it answers 429 with Retry-After', async () => {
    const client = await register(await discover(svc));
    const bad = () =>
      tokenRequest(svc, {
        grant_type: 'authorization_code',
        code: 'not-a-code',
        redirect_uri: REDIRECT,
        code_verifier: 'v'.repeat(43),
        client_id: client.client_id,
      });
    for (let i = 0; i < 3; i++) expect((await bad()).status).toBe(400);
    const limited = await bad();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('one address: after 12 failures in all, sign-in and tokens answer 429 for any account', async () => {
    for (let i = 0; i < 12; i++) {
      await svc.fetch('/login', {
        method: 'POST',
        body: new URLSearchParams({ email: `nobody${i}@example.test`, password: 'x', next: '/' }),
        redirect: 'manual',
      });
    }
    const res = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: svc.admin.email, password: svc.admin.password, next: '/' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await svc.deps.sql`delete from rate_limits`;
  });

  it('registration: at most 10 per address per window, then 429 with Retry-After', async () => {
    const d = await discover(svc);
    await svc.deps.sql`delete from oauth_clients`;
    for (let i = 0; i < 10; i++) await register(d);
    const res = await svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'eleventh',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('__Host- session cookie under https', () => {
  let https: TestService;
  beforeAll(async () => {
    https = await startTestService({ env: { BASE_URL: 'https://countersign.example.test' } });
  });
  afterAll(async () => https?.stop());

  it('is named __Host-cs_session, Secure, Path=/, without Domain, and authenticates', async () => {
    const res = await https.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: https.admin.email, password: https.admin.password, next: '/' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-cs_session='));
    expect(setCookie).toBeDefined();
    expect(setCookie).toMatch(/;\s*Secure/i);
    expect(setCookie).toMatch(/;\s*Path=\//i);
    expect(setCookie).not.toMatch(/;\s*Domain=/i);
    const value = /__Host-cs_session=([^;]+)/.exec(setCookie!)![1];
    const me = await https.fetch('/api/v1/me', { headers: { cookie: `__Host-cs_session=${value}` } });
    expect(me.status).toBe(200);
    // The unprefixed name is not accepted under https (a sibling host could set it).
    const plain = await https.fetch('/api/v1/me', { headers: { cookie: `cs_session=${value}` } });
    expect(plain.status).toBe(401);
  });
});
