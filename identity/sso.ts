// Per-organization OIDC single sign-on (DESIGN.md Identity: password and SSO end in the same
// session). The service is the relying party; oauth4webapi does the protocol (OIDC Core §3.1,
// authorization code flow with PKCE, state and nonce).
import * as oauth from 'oauth4webapi';
import type { Config } from '../config/env.ts';
import { validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { policyFetch } from '../core/outbound/fetch.ts';
import { outboundPolicy, type PolicyConfig } from '../core/outbound/policy.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Sql } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import {
  deleteSsoConfig,
  findSsoConfig,
  listEnabledSso,
  type SsoConfigRow,
  upsertSsoConfig,
} from '../store/sso.ts';
import { startSession } from './manage.ts';
import { SsoError, ssoAccount } from './sso-accounts.ts';
import { auditSsoChange, requireSsoAuthority, type SsoChanger } from './sso-authority.ts';
import { SsoInput } from './sso-input.ts';

export { SsoError, SsoLinkRequired } from './sso-accounts.ts';

type SsoDeps = { sql: Sql; keyring: Keyring; config: Pick<Config, 'baseUrl'> & PolicyConfig };

/** The round trip's state lives in a sealed cookie, not in memory (any api replica can finish it). */
const LOGIN_CONTEXT = 'sso-login';
const LOGIN_SECONDS = 600;

/** The callback the organization registers at its identity provider. */
export function ssoRedirectUri(baseUrl: string): string {
  return `${baseUrl}/login/sso/callback`;
}

/**
 * Sets the organization's SSO from the raw settings either door sent (PUT /api/v1/sso, the
 * Organization page's form), for a super admin who entered their password again
 * (identity/sso-authority.ts); the client secret is sealed bound to the organization. An empty
 * secret keeps the stored one (the settings page never shows it back).
 */
export async function setSsoConfig(
  deps: SsoDeps,
  orgId: string,
  who: Omit<SsoChanger, 'currentPassword'>,
  raw: unknown,
): Promise<SsoConfigRow> {
  const { current_password, ...s } = parseInput(SsoInput, raw);
  const { userId } = await requireSsoAuthority(deps.sql, { ...who, currentPassword: current_password });
  return deps.sql.begin(async (tx) => {
    const existing = await findSsoConfig(tx, orgId);
    if (s.client_secret === '' && !existing)
      throw validationFailed([
        { path: 'client_secret', message: 'is required when single sign-on is first set up' },
      ]);
    const row = await upsertSsoConfig(tx, {
      org_id: orgId,
      id: existing?.id ?? newId('sso'),
      issuer: s.issuer.replace(/\/+$/, ''),
      client_id: s.client_id,
      client_secret_enc:
        s.client_secret === '' && existing
          ? existing.client_secret_enc
          : deps.keyring.encrypt(s.client_secret, `sso:${orgId}`),
      provision_role: s.provision_role,
      role_claim: s.role_claim ?? null,
      role_map: s.role_map ?? {},
      domains: [...new Set((s.domains ?? []).map((d) => d.toLowerCase()))],
      enabled: s.enabled,
    });
    await auditSsoChange(tx, orgId, userId, 'sso.updated', {
      issuer: row.issuer,
      previous_issuer: existing?.issuer ?? null,
      client_id: row.client_id,
      provision_role: row.provision_role,
      domains: row.domains,
      enabled: row.enabled,
    });
    return row;
  });
}

export const getSsoConfig = (sql: Sql, orgId: string) => findSsoConfig(sql, orgId);

/** Removes the organization's SSO (a super admin who entered their password again); false if none. */
export async function removeSsoConfig(sql: Sql, orgId: string, who: SsoChanger): Promise<boolean> {
  const { userId } = await requireSsoAuthority(sql, who);
  return sql.begin(async (tx) => {
    const existing = await findSsoConfig(tx, orgId);
    if (!(await deleteSsoConfig(tx, orgId))) return false;
    await auditSsoChange(tx, orgId, userId, 'sso.deleted', { issuer: existing?.issuer ?? null });
    return true;
  });
}
/** Login-page buttons: organizations whose SSO is enabled. */
export const ssoChoices = (sql: Sql) => listEnabledSso(sql);

interface Relying {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  options: { [oauth.allowInsecureRequests]?: boolean; [oauth.customFetch]: typeof fetch };
}

async function relyingParty(deps: SsoDeps, cfg: SsoConfigRow): Promise<Relying> {
  const issuer = new URL(cfg.issuer);
  // Plain http only for an identity provider on the loopback interface (development, tests).
  const insecure =
    issuer.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
  const options = {
    ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}),
    // Discovery, token and userinfo requests go through the outbound network policy like every
    // connection the service opens: an issuer on a private address needs the operator's consent.
    [oauth.customFetch]: policyFetch(outboundPolicy(deps.config), {
      timeoutMs: 10_000,
      maxBodyBytes: 1024 * 1024,
    }),
  };
  let as: oauth.AuthorizationServer;
  try {
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oidc' }),
    );
  } catch (err) {
    throw new SsoError(
      'The identity provider could not be reached.',
      `discovery failed: ${(err as Error).message}`,
    );
  }
  const secret = deps.keyring.decrypt(cfg.client_secret_enc, `sso:${cfg.org_id}`);
  const methods = as.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  const auth = methods.includes('client_secret_basic')
    ? oauth.ClientSecretBasic(secret)
    : oauth.ClientSecretPost(secret);
  return { as, client: { client_id: cfg.client_id }, auth, options };
}

interface PendingLogin {
  orgId: string;
  verifier: string;
  state: string;
  nonce: string;
  next: string;
  exp: number;
}

/** Starts a sign-in: the IdP URL to send the browser to and the sealed state for the cookie. */
export async function startSsoLogin(
  deps: SsoDeps,
  orgId: string,
  next: string,
): Promise<{ url: string; cookie: string }> {
  const cfg = await findSsoConfig(deps.sql, orgId);
  if (!cfg?.enabled) throw new SsoError('Single sign-on is not set up for this organization.');
  const rp = await relyingParty(deps, cfg);
  if (!rp.as.authorization_endpoint)
    throw new SsoError('The identity provider has no authorization endpoint.');
  const pending: PendingLogin = {
    orgId,
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    next,
    exp: Date.now() + LOGIN_SECONDS * 1000,
  };
  const url = new URL(rp.as.authorization_endpoint);
  url.searchParams.set('client_id', cfg.client_id);
  url.searchParams.set('redirect_uri', ssoRedirectUri(deps.config.baseUrl));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'openid email profile');
  // RFC 9700 §2.1.1: PKCE S256; OIDC Core §3.1.2.1: state against CSRF, nonce against replay.
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', pending.state);
  url.searchParams.set('nonce', pending.nonce);
  return { url: url.toString(), cookie: deps.keyring.encrypt(JSON.stringify(pending), LOGIN_CONTEXT) };
}

/**
 * Finishes a sign-in at the callback: validates the response (state, iss), exchanges the code
 * with the PKCE verifier, validates the ID token (nonce, audience, signature), and finds or
 * provisions the user by verified email in that organization. Returns a new session.
 */
export async function finishSsoLogin(
  deps: SsoDeps,
  sealed: string | undefined,
  callbackUrl: URL,
): Promise<{ cookie: string; next: string }> {
  const pending = openPending(deps, sealed);
  const cfg = await findSsoConfig(deps.sql, pending.orgId);
  if (!cfg?.enabled) throw new SsoError('Single sign-on is not set up for this organization.');
  const rp = await relyingParty(deps, cfg);
  let claims: Record<string, unknown>;
  try {
    const params = oauth.validateAuthResponse(rp.as, rp.client, callbackUrl, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      rp.as,
      rp.client,
      rp.auth,
      params,
      ssoRedirectUri(deps.config.baseUrl),
      pending.verifier,
      rp.options,
    );
    const result = await oauth.processAuthorizationCodeResponse(rp.as, rp.client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const idToken = oauth.getValidatedIdTokenClaims(result)!;
    claims = { ...idToken };
    // OIDC Core §5.4: with the code flow, scope claims may come only from the UserInfo endpoint.
    if (typeof claims.email !== 'string' || (cfg.role_claim && !(cfg.role_claim in claims))) {
      const info = await oauth.userInfoRequest(rp.as, rp.client, result.access_token, rp.options);
      claims = { ...claims, ...(await oauth.processUserInfoResponse(rp.as, rp.client, idToken.sub, info)) };
    }
  } catch (err) {
    if (err instanceof SsoError) throw err;
    throw new SsoError('The identity provider did not confirm the sign-in.', (err as Error).message);
  }
  const userId = await ssoAccount(deps.sql, cfg, claims);
  const session = await startSession(deps.sql, userId);
  return { cookie: session.cookie, next: pending.next };
}

function openPending(deps: SsoDeps, sealed: string | undefined): PendingLogin {
  if (!sealed) throw new SsoError('The sign-in expired or was started in another browser.', 'no sso cookie');
  let pending: PendingLogin;
  try {
    pending = JSON.parse(deps.keyring.decrypt(sealed, LOGIN_CONTEXT)) as PendingLogin;
  } catch {
    throw new SsoError('The sign-in expired or was started in another browser.', 'sso cookie does not open');
  }
  if (pending.exp < Date.now()) throw new SsoError('The sign-in expired; try again.', 'sso cookie expired');
  return pending;
}
