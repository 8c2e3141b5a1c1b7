// Per-organization OIDC single sign-on (DESIGN.md Identity: password and SSO end in the same
// session). The service is the relying party; oauth4webapi does the protocol (OIDC Core §3.1,
// authorization code flow with PKCE, state and nonce).
import * as oauth from 'oauth4webapi';
import type { Config } from '../config/env.ts';
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
import { findUserByEmail } from '../store/users.ts';
import { createUser, startSession } from './manage.ts';

type SsoDeps = { sql: Sql; keyring: Keyring; config: Pick<Config, 'baseUrl'> & PolicyConfig };

/** The round trip's state lives in a sealed cookie, not in memory (any api replica can finish it). */
const LOGIN_CONTEXT = 'sso-login';
const LOGIN_SECONDS = 600;

/** Why an SSO sign-in failed, written for the person at the browser (never a secret). */
export class SsoError extends Error {
  constructor(
    readonly userMessage: string,
    readonly reason: string = userMessage,
  ) {
    super(userMessage);
    this.name = 'SsoError';
  }
}

export interface SsoSettings {
  issuer: string;
  client_id: string;
  client_secret: string;
  provision_role: 'admin' | 'member' | null;
  role_claim?: string | null;
  role_map?: Record<string, 'admin' | 'member'>;
  enabled: boolean;
}

/** The callback the organization registers at its identity provider. */
export function ssoRedirectUri(baseUrl: string): string {
  return `${baseUrl}/login/sso/callback`;
}

/**
 * Sets the organization's SSO; the client secret is sealed bound to the organization. An empty
 * secret keeps the stored one (the settings page never shows it back).
 */
export async function setSsoConfig(deps: SsoDeps, orgId: string, s: SsoSettings): Promise<SsoConfigRow> {
  const existing = await findSsoConfig(deps.sql, orgId);
  return upsertSsoConfig(deps.sql, {
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
    enabled: s.enabled,
  });
}

export const getSsoConfig = (sql: Sql, orgId: string) => findSsoConfig(sql, orgId);
export const removeSsoConfig = (sql: Sql, orgId: string) => deleteSsoConfig(sql, orgId);
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
  const userId = await userFor(deps, cfg, claims);
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

/** Only a verified email identifies a person; a user of another organization is never taken over. */
async function userFor(deps: SsoDeps, cfg: SsoConfigRow, claims: Record<string, unknown>): Promise<string> {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email || claims.email_verified !== true) {
    throw new SsoError('Your identity provider did not confirm your email address.', 'no verified email');
  }
  const user = await findUserByEmail(deps.sql, email);
  if (user) {
    if (user.org_id !== cfg.org_id)
      throw new SsoError('This account belongs to another organization.', 'email in another org');
    if (user.disabled_at !== null) throw new SsoError('This account is disabled.', 'user disabled');
    return user.id;
  }
  const role = mappedRole(cfg, claims) ?? cfg.provision_role;
  if (!role)
    throw new SsoError('You do not have an account here yet; ask an administrator.', 'not provisioned');
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : '';
  const created = await createUser(deps.sql, { orgId: cfg.org_id, email, name, role, password: null });
  return created.id;
}

/**
 * The role a new account gets from the identity provider's claim: the highest role any of the
 * claim's values maps to (a string, or an array such as `groups`); null when none maps. Only
 * account creation uses it — admins change roles later on the People page, and a later sign-in
 * does not undo that.
 */
export function mappedRole(
  cfg: Pick<SsoConfigRow, 'role_claim' | 'role_map'>,
  claims: Record<string, unknown>,
): 'admin' | 'member' | null {
  if (!cfg.role_claim) return null;
  const raw = claims[cfg.role_claim];
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
  const roles = values.map((v) => cfg.role_map[v]).filter(Boolean);
  return roles.includes('admin') ? 'admin' : roles.includes('member') ? 'member' : null;
}
