import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let memberToken: string;
beforeAll(async () => {
  svc = await startTestService();
  const org = await firstOrganization(svc.deps.sql);
  const member = await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: 'm@example.test',
    role: 'member',
    password: null,
  });
  memberToken = (await createPersonalToken(svc.deps.sql, { userId: member.id, name: 'm', expiresAt: null }))
    .secret;
});
afterAll(async () => svc?.stop());

async function expectProblem(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  const body = await res.json();
  expect(body).toMatchObject({
    status,
    type: expect.stringMatching(/\/problems\//),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}

describe('RFC 9457 problem responses', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    svc.fetch(path, {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json', ...headers },
      body,
    });

  it('400 for a body that is not JSON, and nothing is written', async () => {
    const before = await svc.deps.sql`select count(*)::int as n from api_keys`;
    const body = await expectProblem(await post('/api/v1/api-keys', '{not json'), 400);
    expect(body.detail).toMatch(/JSON/);
    expect(await svc.deps.sql`select count(*)::int as n from api_keys`).toEqual(before);
  });

  it('401 without credentials', async () => {
    await expectProblem(await svc.fetch('/api/v1/api-keys'), 401);
  });

  it('403 when a member asks for an admin operation', async () => {
    const res = await svc.fetch('/api/v1/api-keys', { headers: { authorization: `Bearer ${memberToken}` } });
    const body = await expectProblem(res, 403);
    expect(body.detail).toMatch(/admin/);
  });

  it('404 for an unknown route and an unknown object', async () => {
    await expectProblem(await svc.fetch('/api/v1/nothing-here'), 404);
    await expectProblem(
      await svc.fetch('/api/v1/api-keys/key_01M7ZJQEWKV8HR45Y5E3J2CXXG', {
        method: 'DELETE',
        headers: { 'x-api-key': svc.apiKey },
      }),
      404,
    );
  });

  it('422 names each bad field, and nothing is written', async () => {
    const before = await svc.deps.sql`select count(*)::int as n from api_keys`;
    const body = await expectProblem(await post('/api/v1/api-keys', JSON.stringify({ name: '' })), 422);
    expect(body.errors).toEqual([{ path: 'name', message: 'name is required' }]);
    const tokenBody = await expectProblem(
      await svc.fetch('/api/v1/tokens', {
        method: 'POST',
        headers: { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x', expires_in_days: -3 }),
      }),
      422,
    );
    expect(tokenBody.errors[0].path).toBe('expires_in_days');
    expect(await svc.deps.sql`select count(*)::int as n from api_keys`).toEqual(before);
  });
});

describe('health', () => {
  it('/healthz answers 200; /readyz reports the store and Temporal separately', async () => {
    expect((await svc.fetch('/healthz')).status).toBe(200);
    const ready = await svc.fetch('/readyz');
    // This service was started without Temporal: not ready, and it says why.
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'not ready',
      checks: { store: 'ok', temporal: 'not configured' },
    });
  });

  it('/readyz is 200 when Temporal is connected', async () => {
    const withTemporal = await startTestService({ temporal: true });
    try {
      const ready = await withTemporal.fetch('/readyz');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', temporal: 'ok' } });
    } finally {
      await withTemporal.stop();
    }
  });
});

describe('secrets never reach the logs', () => {
  it('no API key, token, password or cookie appears in any log line', async () => {
    await svc.fetch('/api/v1/me', { headers: { 'x-api-key': svc.apiKey } });
    await svc.fetch('/api/v1/me', { headers: { authorization: `Bearer ${memberToken}` } });
    await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: svc.admin.email, password: svc.admin.password }),
    });
    const all = svc.logs.join('\n');
    expect(svc.logs.length).toBeGreaterThan(3);
    for (const secret of [svc.apiKey, memberToken, svc.admin.password]) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/cs(key|pat|ses)_[0-9A-Z]{26}_[A-Za-z0-9_-]{43}/);
  });
});
