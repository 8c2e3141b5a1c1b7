// A person whom single sign-on creates takes their role from an identity-provider claim
// (here `groups`) mapped value by value, else the default role; an admin changes it later and a
// later sign-in keeps that.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type OidcPeer, startOidcProvider } from '../peers/oidc-provider.ts';
import { Browser } from './flow.ts';

let svc: TestService;
let idp: OidcPeer;
let orgId: string;
/** SSO settings are a super admin's, made as themselves with their password. */
let superAdmin: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService();
  idp = await startOidcProvider(`${svc.url}/login/sso/callback`);
  const [root] = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
  const { secret } = await createPersonalToken(svc.deps.sql, {
    userId: root!.id,
    name: 't',
    expiresAt: null,
  });
  superAdmin = { authorization: `Bearer ${secret}` };
  const res = await svc.fetch('/api/v1/sso', {
    method: 'PUT',
    headers: { ...superAdmin, 'content-type': 'application/json' },
    body: JSON.stringify({
      current_password: svc.admin.password,
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      provision_role: 'member',
      role_claim: 'groups',
      role_map: { 'db-admins': 'admin', analysts: 'member' },
    }),
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ role_claim: 'groups', role_map: { 'db-admins': 'admin' } });
  orgId = (await svc.deps.sql<{ org_id: string }[]>`select org_id from sso_configs`)[0]!.org_id;
});
afterAll(async () => {
  await idp?.close();
  await svc?.stop();
});

async function ssoSignIn(): Promise<number> {
  const { res } = await new Browser(svc).follow(
    `${svc.url}/login/sso?org=${orgId}&next=/settings`,
    (u) => u.pathname === '/settings',
  );
  return res.status;
}
const roleOf = async (email: string) =>
  (await svc.deps.sql<{ role: string }[]>`select role from users where lower(email) = ${email}`)[0]?.role;

describe('roles from the identity provider', () => {
  it('a new account in a mapped group becomes an admin', async () => {
    idp.account = {
      sub: 'idp-a',
      email: 'dana@example.test',
      email_verified: true,
      name: 'Dana',
      groups: ['staff', 'db-admins'],
    };
    expect(await ssoSignIn()).toBeLessThan(400);
    expect(await roleOf('dana@example.test')).toBe('admin');
  });

  it('no mapped value: the default role', async () => {
    idp.account = {
      sub: 'idp-b',
      email: 'eli@example.test',
      email_verified: true,
      name: 'Eli',
      groups: ['staff'],
    };
    expect(await ssoSignIn()).toBeLessThan(400);
    expect(await roleOf('eli@example.test')).toBe('member');
  });

  it('an admin demotes Dana; her next sign-in keeps the role the admin gave', async () => {
    const [dana] = await svc.deps.sql<
      { id: string }[]
    >`select id from users where lower(email) = 'dana@example.test'`;
    const res = await svc.fetch(`/api/v1/users/${dana!.id}`, {
      method: 'PATCH',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'member' }),
    });
    expect(res.status).toBe(200);
    idp.account = {
      sub: 'idp-a',
      email: 'dana@example.test',
      email_verified: true,
      name: 'Dana',
      groups: ['db-admins'],
    };
    expect(await ssoSignIn()).toBeLessThan(400);
    expect(await roleOf('dana@example.test')).toBe('member');
  });

  it('a bad mapping is a 422 naming the field', async () => {
    const res = await svc.fetch('/api/v1/sso', {
      method: 'PUT',
      headers: { ...superAdmin, 'content-type': 'application/json' },
      body: JSON.stringify({
        current_password: svc.admin.password,
        issuer: idp.issuer,
        client_id: 'x',
        client_secret: 'y',
        role_claim: 'groups',
        role_map: { ops: 'owner' },
      }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('role_map.ops');
  });
});
