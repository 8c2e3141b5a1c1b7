// An organization's SSO identity provider is reached through the outbound network policy like
// every other connection: an issuer on loopback (here, the test's OIDC peer) is refused until the
// operator lists it. Loopback only: no other address is involved.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type OidcPeer, startOidcProvider } from '../peers/oidc-provider.ts';

let strict: TestService;
let allowing: TestService;
let idps: OidcPeer[] = [];

beforeAll(async () => {
  [strict, allowing] = await Promise.all([
    // Production default: nothing on loopback may be reached.
    startTestService({ env: { COUNTERSIGN_OUTBOUND_ALLOW: '' } }),
    startTestService({ env: { COUNTERSIGN_OUTBOUND_ALLOW: '127.0.0.1' } }),
  ]);
  idps = await Promise.all([strict, allowing].map((s) => startOidcProvider(`${s.url}/login/sso/callback`)));
});
afterAll(async () => {
  await Promise.all(idps.map((i) => i.close()));
  await Promise.all([strict?.stop(), allowing?.stop()]);
});

/** Configures SSO through the API and starts a sign-in through it; the response of /login/sso. */
async function startSso(svc: TestService, idp: OidcPeer): Promise<Response> {
  // SSO settings are a super admin's, made as themselves (a personal token) with their password.
  const [root] = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
  const { secret } = await createPersonalToken(svc.deps.sql, {
    userId: root!.id,
    name: 'sso',
    expiresAt: null,
  });
  const put = await svc.fetch('/api/v1/sso', {
    method: 'PUT',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      current_password: svc.admin.password,
    }),
  });
  expect(put.status).toBe(200);
  const [org] = await svc.deps.sql<{ org_id: string }[]>`select org_id from sso_configs`;
  return svc.fetch(`/login/sso?${new URLSearchParams({ org: org!.org_id, next: '/' })}`, {
    redirect: 'manual',
  });
}

describe('SSO discovery and token requests', () => {
  it('are refused for an identity provider on loopback by default', async () => {
    const res = await startSso(strict, idps[0]!);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('The identity provider could not be reached.');
  });

  it('reach it once the operator lists it', async () => {
    const res = await startSso(allowing, idps[1]!);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(new RegExp(`^${idps[1]!.issuer}/`));
  });
});
