// No admin above review: an admin cannot make themselves super admin through an organization key,
// cannot reset the password of an equal or a superior and sign in as them, their invitations
// and links die with them, and a password reset ends every credential the old password made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { addPerson, signIn, startTestService, type TestService } from '../helpers/service.ts';
import { connect, mcpStatusOf, tokenRequest } from '../oauth/flow.ts';

let svc: TestService;
let rootId: string;
let root: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService();
  const [r] = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
  rootId = r!.id;
  root = await bearerOf(rootId);
});
afterAll(async () => svc?.stop());

async function bearerOf(userId: string): Promise<Record<string, string>> {
  const { secret } = await createPersonalToken(svc.deps.sql, { userId, name: 't', expiresAt: null });
  return { authorization: `Bearer ${secret}` };
}

async function person(email: string, role: 'member' | 'admin' | 'super_admin') {
  const password = `${email} password`;
  const id = await addPerson(svc, { email, password, role });
  return { id, email, password, bearer: await bearerOf(id) };
}

const call = (method: string, path: string, auth: Record<string, string>, body?: unknown) =>
  svc.fetch(path, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const roleOf = async (id: string) =>
  (await svc.deps.sql<{ role: string }[]>`select role from users where id = ${id}`)[0]!.role;
const linksFor = async (id: string) =>
  (
    await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from password_setups where user_id = ${id}`
  )[0]!.n;
const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
const setPassword = (token: string, password: string) =>
  svc.fetch('/set-password', {
    method: 'POST',
    body: new URLSearchParams({ token, password }),
    redirect: 'manual',
  });

describe('super admin only from a super admin person', () => {
  it("an admin's organization key neither promotes them nor invites a super admin", async () => {
    const admin = await person('climber@example.test', 'admin');
    const created = await call('POST', '/api/v1/api-keys', admin.bearer, { name: 'my key' });
    expect(created.status).toBe(201);
    const key = { 'x-api-key': ((await created.json()) as { key: string }).key };

    const promote = await call('PATCH', `/api/v1/users/${admin.id}`, key, { role: 'super_admin' });
    expect(promote.status).toBe(403);
    expect(await roleOf(admin.id)).toBe('admin');
    // Acting "as" a super admin through the key is still a key.
    const asRoot = await call(
      'PATCH',
      `/api/v1/users/${admin.id}`,
      { ...key, 'x-act-as-user': svc.admin.email },
      { role: 'super_admin' },
    );
    expect(asRoot.status).toBeGreaterThanOrEqual(400);
    expect(await roleOf(admin.id)).toBe('admin');
    const invite = await call('POST', '/api/v1/users', key, {
      email: 'climber.alias@example.test',
      role: 'super_admin',
    });
    expect(invite.status).toBe(403);
    const [alias] = await svc.deps.sql`select 1 from users where email = 'climber.alias@example.test'`;
    expect(alias).toBeUndefined();
    // A super admin demoting one: also not through a key.
    const sue = await person('sue.super@example.test', 'super_admin');
    expect((await call('PATCH', `/api/v1/users/${sue.id}`, key, { role: 'member' })).status).toBe(403);
    expect(await roleOf(sue.id)).toBe('super_admin');

    // A super admin, as themselves, may.
    const ok = await call('PATCH', `/api/v1/users/${admin.id}`, root, { role: 'super_admin' });
    expect(ok.status).toBe(200);
    expect(await roleOf(admin.id)).toBe('super_admin');
  });
});

describe('password resets only from above', () => {
  it('an admin cannot reset another admin, nor a super admin another super admin, nor a key an admin', async () => {
    const admin = await person('resetter@example.test', 'admin');
    const peer = await person('peer.admin@example.test', 'admin');
    const sue = await person('sue2.super@example.test', 'super_admin');
    const key = { 'x-api-key': svc.apiKey };
    for (const [who, target] of [
      [admin.bearer, peer.id],
      [admin.bearer, rootId],
      [root, sue.id],
      [key, peer.id],
      [key, sue.id],
    ] as const) {
      const res = await call('POST', `/api/v1/users/${target}/password-link`, who);
      expect(res.status, `${JSON.stringify(who).slice(0, 20)} → ${target}`).toBe(403);
      expect(JSON.stringify(await res.json())).not.toContain('set-password');
    }
    expect(await linksFor(peer.id)).toBe(0);
    expect(await linksFor(sue.id)).toBe(0);

    // The same from the People page: the form is refused and no link is shown.
    const s = await signIn(svc, admin.email, admin.password);
    const page = await svc.fetch(`/people/${peer.id}/password-link`, {
      method: 'POST',
      headers: { cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrf }),
      redirect: 'manual',
    });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toContain('error=');
    expect(await linksFor(peer.id)).toBe(0);
    const list = await (await svc.fetch('/people', { headers: { cookie: s.cookie } })).text();
    expect(list).not.toContain(`/people/${peer.id}/password-link`);
  });

  it("a super admin resets an admin's password; it is audited once, naming the person", async () => {
    const target = await person('reset.target@example.test', 'admin');
    const res = await call('POST', `/api/v1/users/${target.id}/password-link`, root);
    expect(res.status).toBe(201);
    const events = await svc.deps.sql<
      { event: string; subject: Record<string, unknown>; actor_user_id: string }[]
    >`
      select event, subject, actor_user_id from audit_log
      where subject->>'user_id' = ${target.id} and event like 'user.password_reset%' order by seq`;
    // One change, one event: it names the person to be told.
    expect(events.map((e) => e.event)).toEqual(['user.password_reset']);
    expect(events[0]!.actor_user_id).toBe(rootId);
    expect(events[0]!.subject).toMatchObject({ email: target.email });
    // An admin resets a member's, also audited.
    const admin = await person('member.resetter@example.test', 'admin');
    const member = await person('reset.member@example.test', 'member');
    expect((await call('POST', `/api/v1/users/${member.id}/password-link`, admin.bearer)).status).toBe(201);
    const [m] = await svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where event = 'user.password_reset' and subject->>'user_id' = ${member.id}`;
    expect(m!.n).toBe(1);
  });
});

describe('links die with the admin who issued them', () => {
  it("a disabled or deleted admin's invitations and password links stop working, and stay dead", async () => {
    const leaving = await person('leaving.admin@example.test', 'admin');
    const invited = await call('POST', '/api/v1/users', leaving.bearer, {
      email: 'invitee@example.test',
      role: 'member',
    });
    expect(invited.status).toBe(201);
    const invitation = tokenOf(((await invited.json()) as { set_password_url: string }).set_password_url);
    const member = await person('reset.by.leaver@example.test', 'member');
    const reset = await call('POST', `/api/v1/users/${member.id}/password-link`, leaving.bearer);
    const resetToken = tokenOf(((await reset.json()) as { set_password_url: string }).set_password_url);
    expect((await svc.fetch(`/set-password?token=${encodeURIComponent(invitation)}`)).status).toBe(200);

    expect((await call('PATCH', `/api/v1/users/${leaving.id}`, root, { disabled: true })).status).toBe(200);
    for (const token of [invitation, resetToken]) {
      expect((await svc.fetch(`/set-password?token=${encodeURIComponent(token)}`)).status).toBe(410);
      expect((await setPassword(token, 'a takeover password')).status).toBe(410);
    }
    expect((await call('PATCH', `/api/v1/users/${leaving.id}`, root, { disabled: false })).status).toBe(200);
    expect((await setPassword(invitation, 'a takeover password')).status).toBe(410);

    const deleted = await person('deleted.admin@example.test', 'admin');
    const again = await call('POST', '/api/v1/users', deleted.bearer, {
      email: 'invitee2@example.test',
      role: 'member',
    });
    const second = tokenOf(((await again.json()) as { set_password_url: string }).set_password_url);
    expect((await call('DELETE', `/api/v1/users/${deleted.id}`, root)).status).toBe(200);
    expect((await setPassword(second, 'a takeover password')).status).toBe(410);
    const [u] = await svc.deps.sql<{ password_hash: string | null }[]>`
      select password_hash from users where email = 'invitee2@example.test'`;
    expect(u!.password_hash).toBeNull();
  });

  it('a link issued through an organization key stops working when the key is revoked', async () => {
    const admin = await person('key.maker@example.test', 'admin');
    const created = await call('POST', '/api/v1/api-keys', admin.bearer, { name: 'inviting key' });
    const { id, key } = (await created.json()) as { id: string; key: string };
    const invited = await call(
      'POST',
      '/api/v1/users',
      { 'x-api-key': key },
      {
        email: 'key.invitee@example.test',
        role: 'member',
      },
    );
    expect(invited.status).toBe(201);
    const token = tokenOf(((await invited.json()) as { set_password_url: string }).set_password_url);
    expect((await svc.fetch(`/set-password?token=${encodeURIComponent(token)}`)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/api-keys/${id}`, admin.bearer)).status).toBeLessThan(300);
    expect((await setPassword(token, 'a takeover password')).status).toBe(410);
  });
});

describe('a password reset ends every credential', () => {
  it('an admin reset, and then setting the password through the link, each end sessions, tokens and AI grants', async () => {
    const p = await person('reset.everything@example.test', 'member');
    const admin = await person('the.resetting.admin@example.test', 'admin');
    const me = (h: Record<string, string>) => svc.fetch('/api/v1/me', { headers: h });
    const credentials = async () => ({
      session: await signIn(svc, p.email, p.password),
      bearer: await bearerOf(p.id),
      oauth: await connect(svc, p),
    });
    const ended = async (c: Awaited<ReturnType<typeof credentials>>) => {
      expect((await me({ cookie: c.session.cookie })).status).toBe(401);
      expect((await me(c.bearer)).status).toBe(401);
      expect((await mcpStatusOf(svc, c.oauth.tokens.access_token)).status).toBe(401);
      const refreshed = await tokenRequest(svc, {
        grant_type: 'refresh_token',
        refresh_token: c.oauth.tokens.refresh_token!,
        client_id: c.oauth.client.client_id,
      });
      expect(refreshed.status).toBe(400);
    };

    const before = await credentials();
    expect((await me(before.bearer)).status).toBe(200);
    expect((await mcpStatusOf(svc, before.oauth.tokens.access_token)).status).toBe(200);
    const reset = await call('POST', `/api/v1/users/${p.id}/password-link`, admin.bearer);
    expect(reset.status).toBe(201);
    await ended(before);

    // The old password still signs in until the link is used; what it makes ends then too.
    const meanwhile = await credentials();
    expect((await mcpStatusOf(svc, meanwhile.oauth.tokens.access_token)).status).toBe(200);
    const token = tokenOf(((await reset.json()) as { set_password_url: string }).set_password_url);
    expect((await setPassword(token, 'the new password 12')).status).toBe(303);
    await ended(meanwhile);
    await signIn(svc, p.email, 'the new password 12');
  });
});
