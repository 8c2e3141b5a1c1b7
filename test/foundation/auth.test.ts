import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { setUserDisabled } from '../../store/users.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

const me = (headers: Record<string, string>) => svc.fetch('/api/v1/me', { headers });

describe('API key (x-api-key, SPEC.md 5.1)', () => {
  it('a valid key acts for the organization', async () => {
    const res = await me({ 'x-api-key': svc.apiKey });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ kind: 'api_key' });
  });

  it('a wrong key is 401 problem JSON', async () => {
    const wrong = `${svc.apiKey.slice(0, -4)}AAAA`;
    const res = await me({ 'x-api-key': wrong });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect((await res.json()).detail).toMatch(/API key is invalid/);
  });

  it('a missing credential is 401 naming what to send', async () => {
    const res = await me({});
    expect(res.status).toBe(401);
    expect((await res.json()).detail).toMatch(/x-api-key/);
  });

  it('a key created through the API works once, is listed without its secret, and stops after revocation', async () => {
    const created = await svc.fetch('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { id, key } = (await created.json()) as { id: string; key: string };
    expect((await me({ 'x-api-key': key })).status).toBe(200);

    const listed = await (
      await svc.fetch('/api/v1/api-keys', { headers: { 'x-api-key': svc.apiKey } })
    ).text();
    expect(listed).toContain(id);
    expect(listed).not.toContain(key);

    const revoked = await svc.fetch(`/api/v1/api-keys/${id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': svc.apiKey },
    });
    expect(revoked.status).toBe(204);
    expect((await me({ 'x-api-key': key })).status).toBe(401);
    const again = await svc.fetch(`/api/v1/api-keys/${id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': svc.apiKey },
    });
    expect(again.status).toBe(404);
  });
});

describe('personal access token (Authorization: Bearer, SPEC.md 5.2)', () => {
  it('acts as its user; wrong, revoked, expired and disabled-user tokens are 401', async () => {
    const user = await createUser(svc.deps.sql, {
      orgId: await orgId(),
      email: 'pat@example.test',
      role: 'member',
      password: null,
    });
    const { token, secret } = await createPersonalToken(svc.deps.sql, {
      userId: user.id,
      name: 't',
      expiresAt: null,
    });
    const ok = await me({ authorization: `Bearer ${secret}` });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ kind: 'user', user_id: user.id, via: 'token', role: 'member' });

    const wrong = await me({ authorization: `Bearer ${secret.slice(0, -3)}xyz` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);

    const expired = await createPersonalToken(svc.deps.sql, {
      userId: user.id,
      name: 'old',
      expiresAt: new Date(Date.now() - 1000),
    });
    expect((await me({ authorization: `Bearer ${expired.secret}` })).status).toBe(401);

    const del = await svc.fetch(`/api/v1/tokens/${token.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(del.status).toBe(204);
    expect((await me({ authorization: `Bearer ${secret}` })).status).toBe(401);

    const live = await createPersonalToken(svc.deps.sql, { userId: user.id, name: 'live', expiresAt: null });
    await setUserDisabled(svc.deps.sql, user.id, true);
    expect((await me({ authorization: `Bearer ${live.secret}` })).status).toBe(401);
  });

  it('a user creates a token through the API and sees it once', async () => {
    const session = await signIn(svc, svc.admin.email, svc.admin.password);
    const res = await svc.fetch('/api/v1/tokens', {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'laptop', expires_in_days: 30 }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { token: string; expires_at: string };
    expect(body.token).toMatch(/^cspat_/);
    expect(new Date(body.expires_at).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    expect((await me({ authorization: `Bearer ${body.token}` })).status).toBe(200);
  });

  it('an API key cannot mint personal tokens (it is no person)', async () => {
    const res = await svc.fetch('/api/v1/tokens', {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(res.status).toBe(401);
  });
});

describe('cookie session (web pages)', () => {
  it('sign-in answers 303 with an HttpOnly SameSite=Lax cookie that authenticates', async () => {
    const res = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({
        email: svc.admin.email,
        password: svc.admin.password,
        next: '/dashboards',
      }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboards');
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const value = /cs_session=([^;]+)/.exec(cookie)![1];
    const who = await me({ cookie: `cs_session=${value}` });
    expect(await who.json()).toMatchObject({
      kind: 'user',
      via: 'session',
      email: svc.admin.email,
      role: 'super_admin',
    });
  });

  it('a wrong password is refused without a cookie; an open redirect is not followed', async () => {
    const res = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: svc.admin.email, password: 'nope' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
    const evil = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({
        email: svc.admin.email,
        password: svc.admin.password,
        next: '//evil.example/',
      }),
      redirect: 'manual',
    });
    expect(evil.headers.get('location')).toBe('/');
  });

  it('an unsafe request with a session needs the CSRF token', async () => {
    const s = await signIn(svc, svc.admin.email, svc.admin.password);
    const post = (headers: Record<string, string>) =>
      svc.fetch('/api/v1/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: s.cookie, ...headers },
        body: JSON.stringify({ name: 'from-browser' }),
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ 'x-csrf-token': 'forged' })).status).toBe(403);
    expect((await post({ 'x-csrf-token': s.csrf })).status).toBe(201);
  });

  it('a wrong cookie is 401 and a signed-out session stops working', async () => {
    expect(
      (
        await me({
          cookie: 'cs_session=csses_01M7ZJQEWKV8HR45Y5E3J2CXXG_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        })
      ).status,
    ).toBe(401);
    const s = await signIn(svc, svc.admin.email, svc.admin.password);
    // Sign-out without the session's CSRF token is refused and ends nothing.
    const forged = await svc.fetch('/logout', {
      method: 'POST',
      headers: { cookie: s.cookie },
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect((await me({ cookie: s.cookie })).status).toBe(200);
    const out = await svc.fetch('/logout', {
      method: 'POST',
      headers: { cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrf }),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    expect((await me({ cookie: s.cookie })).status).toBe(401);
  });
});

async function orgId(): Promise<string> {
  const res = await me({ 'x-api-key': svc.apiKey });
  return ((await res.json()) as { organization_id: string }).organization_id;
}
