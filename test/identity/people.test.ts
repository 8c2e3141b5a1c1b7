// The users API and page — invite with a one-time link, roles, disable (which
// ends sessions, personal tokens and AI grants at once), delete keeping history, the last super
// admin, and an audit event for every change of who may do what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';
import { connect, mcpStatusOf, tokenRequest } from '../oauth/flow.ts';

let svc: TestService;
let rootId: string;

beforeAll(async () => {
  svc = await startTestService();
  const [root] = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
  rootId = root!.id;
});
afterAll(async () => svc?.stop());

const api = (
  method: string,
  path: string,
  body?: unknown,
  auth: Record<string, string> = { 'x-api-key': svc.apiKey },
) =>
  svc.fetch(`/api/v1/users${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

interface Invited {
  id: string;
  email: string;
  role: string;
  status: string;
  set_password_url: string;
}

/** Invites someone and lets them set their password through the link, as a browser would. */
async function onboard(email: string, role: string, password = 'a good long password'): Promise<Invited> {
  const res = await api('POST', '', { email, role });
  expect(res.status).toBe(201);
  const invited = (await res.json()) as Invited;
  const url = new URL(invited.set_password_url);
  const token = url.searchParams.get('token')!;
  const set = await svc.fetch('/set-password', {
    method: 'POST',
    body: new URLSearchParams({ token, password }),
    redirect: 'manual',
  });
  expect(set.status).toBe(303);
  return invited;
}

async function events(userId: string) {
  return svc.deps.sql<{ event: string; subject: Record<string, unknown> }[]>`
    select event, subject from audit_log where event like 'user.%' and subject->>'user_id' = ${userId} order by seq`;
}

describe('inviting', () => {
  it('creates an invited person whose one-time link sets a password once', async () => {
    const res = await api('POST', '', {
      email: 'new.person@example.test',
      name: 'New Person',
      role: 'member',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const invited = (await res.json()) as Invited;
    expect(invited).toMatchObject({ email: 'new.person@example.test', role: 'member', status: 'invited' });
    const token = new URL(invited.set_password_url).searchParams.get('token')!;
    // The link's secret is stored only as a hash.
    const [stored] = await svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from password_setups where secret_hash = ${token}`;
    expect(stored!.n).toBe(0);
    expect((await svc.fetch(`/set-password?token=${encodeURIComponent(token)}`)).status).toBe(200);
    const short = await svc.fetch('/set-password', {
      method: 'POST',
      body: new URLSearchParams({ token, password: 'short' }),
    });
    expect(short.status).toBe(422);
    const ok = await svc.fetch('/set-password', {
      method: 'POST',
      body: new URLSearchParams({ token, password: 'the chosen password 1' }),
      redirect: 'manual',
    });
    expect(ok.status).toBe(303);
    const again = await svc.fetch('/set-password', {
      method: 'POST',
      body: new URLSearchParams({ token, password: 'another password 22' }),
    });
    expect(again.status).toBe(410);
    await signIn(svc, 'new.person@example.test', 'the chosen password 1');
    expect((await events(invited.id)).map((e) => e.event)).toEqual(['user.created', 'user.password_set']);
  });

  it('refuses bad input with a problem naming the field, and creates nothing', async () => {
    const before = (await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from users`)[0]!.n;
    const bad = await api('POST', '', { email: 'not an email', role: 'member' });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('email');
    const role = await api('POST', '', { email: 'x@example.test', role: 'owner' });
    expect(((await role.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('role');
    const taken = await api('POST', '', { email: svc.admin.email.toUpperCase(), role: 'member' });
    expect(taken.status).toBe(422);
    expect((await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from users`)[0]!.n).toBe(before);
  });
});

describe('roles and the last super admin', () => {
  it('changes a role, audited with from and to, in a chain that still verifies', async () => {
    const p = await onboard('promote.me@example.test', 'member');
    const res = await api('PATCH', `/${p.id}`, { role: 'admin' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { role: string }).role).toBe('admin');
    const changed = (await events(p.id)).find((e) => e.event === 'user.role_changed');
    expect(changed?.subject).toMatchObject({ from: 'member', to: 'admin' });
    const verify = await svc.fetch('/api/v1/audit/verify', { headers: { 'x-api-key': svc.apiKey } });
    expect(((await verify.json()) as { ok: boolean }).ok).toBe(true);
    // Altering the event's subject breaks the chain.
    await svc.deps.sql`alter table audit_log disable trigger user`;
    await svc.deps.sql`update audit_log set subject = jsonb_set(subject, '{to}', '"super_admin"')
      where event = 'user.role_changed' and subject->>'user_id' = ${p.id}`;
    await svc.deps.sql`alter table audit_log enable trigger user`;
    const broken = await svc.fetch('/api/v1/audit/verify', { headers: { 'x-api-key': svc.apiKey } });
    expect(((await broken.json()) as { ok: boolean }).ok).toBe(false);
    await svc.deps.sql`alter table audit_log disable trigger user`;
    await svc.deps.sql`update audit_log set subject = jsonb_set(subject, '{to}', '"admin"')
      where event = 'user.role_changed' and subject->>'user_id' = ${p.id}`;
    await svc.deps.sql`alter table audit_log enable trigger user`;
  });

  it('the last active super admin can be neither demoted, disabled nor deleted', async () => {
    // Only a super admin person touches a super admin (the organization key may be an admin's);
    // the last one is the very person asking, who cannot leave that role.
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: rootId,
      name: 't',
      expiresAt: null,
    });
    for (const [method, body] of [
      ['PATCH', { role: 'admin' }],
      ['PATCH', { disabled: true }],
      ['DELETE', undefined],
    ] as const) {
      expect((await api(method, `/${rootId}`, body)).status).toBe(403);
      const res = await api(method, `/${rootId}`, body, { authorization: `Bearer ${secret}` });
      expect(res.status).toBe(409);
    }
    expect((await api('GET', `/${rootId}`).then((r) => r.json())) as { role: string }).toMatchObject({
      role: 'super_admin',
      status: 'active',
    });
  });

  it('an admin manages members and admins but not super admins, nor themselves', async () => {
    const admin = await onboard('an.admin@example.test', 'admin');
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: admin.id,
      name: 't',
      expiresAt: null,
    });
    const asAdmin = { authorization: `Bearer ${secret}` };
    const member = await onboard('managed.member@example.test', 'member');
    expect((await api('PATCH', `/${member.id}`, { role: 'admin' }, asAdmin)).status).toBe(200);
    expect((await api('PATCH', `/${member.id}`, { role: 'super_admin' }, asAdmin)).status).toBe(403);
    expect((await api('PATCH', `/${rootId}`, { disabled: true }, asAdmin)).status).toBe(403);
    expect((await api('PATCH', `/${admin.id}`, { disabled: true }, asAdmin)).status).toBe(409);
    // Members do not manage people at all.
    const m = await onboard('plain.member@example.test', 'member');
    const { secret: memberToken } = await createPersonalToken(svc.deps.sql, {
      userId: m.id,
      name: 't',
      expiresAt: null,
    });
    expect((await api('GET', '', undefined, { authorization: `Bearer ${memberToken}` })).status).toBe(403);
  });
});

describe('disabling and deleting', () => {
  it('disabling ends sessions, personal tokens and AI grants at once; enabling brings none back', async () => {
    const password = 'disable me password 1';
    const p = await onboard('to.disable@example.test', 'member', password);
    const session = await signIn(svc, p.email, password);
    const { secret } = await createPersonalToken(svc.deps.sql, { userId: p.id, name: 't', expiresAt: null });
    const { tokens, client } = await connect(svc, { email: p.email, password });
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);

    expect((await api('PATCH', `/${p.id}`, { disabled: true })).status).toBe(200);
    const me = (h: Record<string, string>) => svc.fetch('/api/v1/me', { headers: h });
    expect((await me({ cookie: session.cookie })).status).toBe(401);
    expect((await me({ authorization: `Bearer ${secret}` })).status).toBe(401);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(401);

    expect((await api('PATCH', `/${p.id}`, { disabled: false })).status).toBe(200);
    expect((await me({ cookie: session.cookie })).status).toBe(401);
    expect((await me({ authorization: `Bearer ${secret}` })).status).toBe(401);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(401);
    const refreshed = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect(refreshed.status).toBe(400);
    const disabled = (await events(p.id)).find((e) => e.event === 'user.disabled');
    // Three sessions: the one choosing the password opened, the sign-in above and the one the
    // OAuth consent was given in.
    expect(disabled?.subject).toMatchObject({ sessions_ended: 3, tokens_revoked: 1, ai_grants_revoked: 1 });
    // They can sign in again with their password once enabled.
    await signIn(svc, p.email, password);
  });

  it('deleting removes access and the person from lists, keeps their history, and frees the address', async () => {
    const password = 'delete me password 1';
    const p = await onboard('to.delete@example.test', 'member', password);
    const session = await signIn(svc, p.email, password);
    expect((await api('DELETE', `/${p.id}`)).status).toBe(200);
    expect((await api('GET', `/${p.id}`)).status).toBe(404);
    const list = (await (await api('GET', '')).json()) as { data: Array<{ id: string }> };
    expect(list.data.map((u) => u.id)).not.toContain(p.id);
    expect((await svc.fetch('/api/v1/me', { headers: { cookie: session.cookie } })).status).toBe(401);
    await expect(signIn(svc, p.email, password)).rejects.toThrow();
    expect((await events(p.id)).map((e) => e.event)).toContain('user.deleted');
    const again = await api('POST', '', { email: p.email, role: 'member' });
    expect(again.status).toBe(201);
    expect(((await again.json()) as { id: string }).id).not.toBe(p.id);
  });
});

describe('the People page', () => {
  it('an admin invites from the page and sees the link once; a member is refused', async () => {
    const s = await signIn(svc, svc.admin.email, svc.admin.password);
    const list = await svc.fetch('/people', { headers: { cookie: s.cookie } });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain(svc.admin.email);
    const invited = await svc.fetch('/people', {
      method: 'POST',
      headers: { cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrf, email: 'from.page@example.test', role: 'member' }),
      redirect: 'manual',
    });
    // Post/Redirect/Get: the link is in neither the answer nor the URL, but in a sealed cookie
    // that the next page reads once.
    expect(invited.status).toBe(303);
    const to = invited.headers.get('location')!;
    expect(to).not.toContain('cspws_');
    const sealed = /cs_people_link=([^;]+)/.exec(invited.headers.get('set-cookie') ?? '')![1]!;
    expect(sealed).not.toContain('cspws_');
    const shown = await svc.fetch(to, { headers: { cookie: `${s.cookie}; cs_people_link=${sealed}` } });
    const html = await shown.text();
    expect(html).toMatch(/\/set-password\?token=cspws_/);
    expect(html).toContain('data-copy-from="setup-link"');
    expect(html).toContain('id="setup-link-expiry"');
    expect(shown.headers.get('set-cookie')).toMatch(/cs_people_link=;|cs_people_link=[^;]*;.*Max-Age=0/);
    // A reload (the same GET without the cleared cookie) shows no link; another session cannot open it.
    expect(await (await svc.fetch(to, { headers: { cookie: s.cookie } })).text()).not.toContain('cspws_');
    const other = await signIn(svc, svc.admin.email, svc.admin.password);
    const stolen = await svc.fetch('/people', {
      headers: { cookie: `${other.cookie}; cs_people_link=${sealed}` },
    });
    expect(await stolen.text()).not.toContain('cspws_');
    const m = await onboard('page.member@example.test', 'member', 'page member password');
    const ms = await signIn(svc, m.email, 'page member password');
    expect((await svc.fetch('/people', { headers: { cookie: ms.cookie } })).status).toBe(403);
  });
});
