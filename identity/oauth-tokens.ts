// The token endpoint's grants (OAuth 2.1 §4.1.3, §4.3) and revocation (RFC 7009).
import { timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/env.ts';
import { findAiClientControl } from '../store/ai-clients.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Sql, Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import {
  consumeCode,
  findCode,
  findGrant,
  findRefreshToken,
  insertGrant,
  insertRefreshToken,
  markRotated,
  type OAuthClientRow,
  type OAuthGrantRow,
  revokeGrant,
  setCodeGrant,
} from '../store/oauth.ts';
import { mintSecret, parseSecret, secretMatches } from '../store/secrets.ts';
import { findUserById } from '../store/users.ts';
import { readAccessToken, signAccessToken } from './oauth-access.ts';
import { CODE_KIND, s256, sameResource } from './oauth-authorize.ts';
import {
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  InvalidTarget,
  type OAuthError,
  UnauthorizedClient,
} from './oauth-errors.ts';

export const REFRESH_KIND = 'csort';

export type TokenDeps = { sql: Sql; keyring: Keyring; config: Pick<Config, 'baseUrl' | 'oauth'> };

/** RFC 6749 §5.1 successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

/**
 * authorization_code grant. The code is marked used before anything else is checked, so a
 * failed attempt burns it too; a code presented a second time revokes the grant it produced
 * (OAuth 2.1 §4.1.3 / RFC 6749 §4.1.2: "SHOULD revoke all tokens previously issued based on
 * that authorization code").
 */
export async function exchangeCode(
  deps: TokenDeps,
  client: OAuthClientRow,
  input: {
    code?: string | undefined;
    redirectUri?: string | undefined;
    codeVerifier?: string | undefined;
    resource?: string | undefined;
  },
): Promise<TokenResponse> {
  if (!input.code) throw new InvalidRequest('code is required');
  if (!input.codeVerifier) throw new InvalidRequest('code_verifier is required (PKCE)');
  const parsed = parseSecret(input.code);
  if (!parsed || parsed.kind !== CODE_KIND) throw new InvalidGrant('the code is invalid', 'malformed code');
  const codeId = `ocd_${parsed.ulid}`;
  const outcome = await deps.sql.begin(
    async (tx): Promise<{ error: OAuthError } | { grant: OAuthGrantRow }> => {
      const code = await consumeCode(tx, codeId);
      if (!code) {
        const used = await findCode(tx, codeId);
        if (used?.used_at && secretMatches(input.code!, used.code_hash) && used.grant_id) {
          await revokeGrant(tx, used.grant_id, 'authorization code replayed');
        }
        return {
          error: new InvalidGrant('the code is invalid, expired or already used', 'code replay or unknown'),
        };
      }
      const problem = codeProblem(code, client, input);
      if (problem) return { error: problem };
      if (!(await userActive(tx, code.user_id))) {
        return { error: new InvalidGrant('the user can no longer sign in', 'user disabled') };
      }
      if (await clientDisabled(tx, code.user_id, client.id)) {
        return { error: new InvalidGrant('the organization has disabled this client', 'client disabled') };
      }
      if (!client.grant_types.includes('authorization_code')) {
        return { error: new UnauthorizedClient('the client did not register the authorization_code grant') };
      }
      const grant = await insertGrant(tx, {
        id: newId('ogr'),
        client_id: client.id,
        user_id: code.user_id,
        scope: code.scope,
        resource: code.resource,
      });
      await setCodeGrant(tx, code.id, grant.id);
      return { grant };
    },
  );
  if ('error' in outcome) throw outcome.error;
  return issueTokens(deps, client, outcome.grant, null);
}

function codeProblem(
  code: Awaited<ReturnType<typeof findCode>> & object,
  client: OAuthClientRow,
  input: {
    code?: string | undefined;
    redirectUri?: string | undefined;
    codeVerifier?: string | undefined;
    resource?: string | undefined;
  },
): OAuthError | null {
  const invalid = (reason: string) =>
    new InvalidGrant('the code is invalid, expired or already used', reason);
  if (!secretMatches(input.code!, code.code_hash)) return invalid('code secret mismatch');
  if (code.expires_at.getTime() <= Date.now()) return invalid('code expired');
  // RFC 6749 §4.1.3: the code was issued to this client.
  if (code.client_id !== client.id) return invalid('code issued to another client');
  // OAuth 2.1 §4.1.3: redirect_uri must be identical to the one in the authorization request.
  if (input.redirectUri !== undefined && input.redirectUri !== code.redirect_uri)
    return invalid('redirect_uri differs');
  // RFC 7636 §4.6: the verifier must hash to the challenge (compared in constant time).
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(input.codeVerifier!)) return invalid('malformed code_verifier');
  const a = Buffer.from(s256(input.codeVerifier!));
  const b = Buffer.from(code.code_challenge);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return invalid('PKCE verifier mismatch');
  // RFC 8707 §2.2: a resource at the token endpoint must be one the code was issued for.
  if (input.resource !== undefined && !sameResource(input.resource, code.resource)) {
    return new InvalidTarget('the resource differs from the one authorized');
  }
  return null;
}

/**
 * refresh_token grant with rotation (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2): every use returns a
 * new refresh token; presenting one already rotated is reuse and revokes the whole grant.
 * DEVIATION: a token rotated less than `refreshGraceSeconds` ago is still honoured once more
 * per request, because clients (e.g. several tabs or processes sharing one credential) refresh
 * in parallel, and a strict reading would disconnect them. The window is seconds long and a
 * thief racing the client inside it still only gets tokens for a grant the user can revoke.
 */
export async function refreshGrant(
  deps: TokenDeps,
  client: OAuthClientRow,
  input: { refreshToken?: string | undefined; scope?: string | undefined; resource?: string | undefined },
): Promise<TokenResponse> {
  if (!input.refreshToken) throw new InvalidRequest('refresh_token is required');
  const invalid = (reason: string) =>
    new InvalidGrant('the refresh token is invalid, expired or revoked', reason);
  const parsed = parseSecret(input.refreshToken);
  if (!parsed || parsed.kind !== REFRESH_KIND) throw invalid('malformed refresh token');
  const row = await findRefreshToken(deps.sql, `ort_${parsed.ulid}`);
  if (!row || !secretMatches(input.refreshToken, row.token_hash)) throw invalid('unknown refresh token');
  const grant = await findGrant(deps.sql, row.grant_id);
  if (!grant || grant.revoked_at !== null) throw invalid('grant revoked');
  // RFC 6749 §6: the refresh token was issued to the authenticated client.
  if (grant.client_id !== client.id) throw invalid('refresh token of another client');
  if (!client.grant_types.includes('refresh_token'))
    throw new UnauthorizedClient('the client did not register the refresh_token grant');
  if (row.expires_at.getTime() <= Date.now()) throw invalid('refresh token expired');
  // A disabled user's grants stay on record but issue nothing (their MCP requests fail too).
  if (!(await userActive(deps.sql, grant.user_id))) throw invalid('user disabled');
  // An AI client the person's organization disabled stays connected on record but is issued
  // nothing: RFC 6749 §5.2 invalid_grant (the refresh token no longer grants anything), the same
  // refusal its access tokens meet at /mcp (api/mcp/auth.ts).
  if (await clientDisabled(deps.sql, grant.user_id, client.id)) throw invalid('client disabled');
  if (!(await markRotated(deps.sql, row.id))) {
    const rotatedAt = (await findRefreshToken(deps.sql, row.id))?.rotated_at ?? new Date(0);
    if (Date.now() - rotatedAt.getTime() > deps.config.oauth.refreshGraceSeconds * 1000) {
      await revokeGrant(deps.sql, grant.id, 'refresh token reused');
      throw invalid('refresh token reuse: grant revoked');
    }
  }
  // RFC 6749 §6: a narrower scope may be asked for, never a wider one.
  const scope = input.scope ?? grant.scope;
  const granted = new Set(grant.scope.split(' '));
  if (!scope.split(' ').every((s) => granted.has(s)))
    throw new InvalidScope('the scope exceeds what was granted');
  if (input.resource !== undefined && !sameResource(input.resource, grant.resource)) {
    throw new InvalidTarget('the resource differs from the one authorized');
  }
  return issueTokens(deps, client, { ...grant, scope }, row.id);
}

async function clientDisabled(sql: Tx, userId: string, clientId: string): Promise<boolean> {
  const user = await findUserById(sql, userId);
  if (!user) return true;
  return (await findAiClientControl(sql, user.org_id, clientId))?.disabled === true;
}

async function userActive(sql: Tx, userId: string): Promise<boolean> {
  const user = await findUserById(sql, userId);
  return user !== null && user.disabled_at === null;
}

async function issueTokens(
  deps: TokenDeps,
  client: OAuthClientRow,
  grant: OAuthGrantRow,
  parentId: string | null,
): Promise<TokenResponse> {
  const accessToken = await signAccessToken(deps, { grant, clientId: client.id });
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: deps.config.oauth.accessTokenSeconds,
    scope: grant.scope,
  };
  if (client.grant_types.includes('refresh_token')) {
    const id = newId('ort');
    const minted = mintSecret(REFRESH_KIND, id);
    await insertRefreshToken(deps.sql, {
      id,
      grant_id: grant.id,
      token_hash: minted.hash,
      parent_id: parentId,
      expires_at: new Date(Date.now() + deps.config.oauth.refreshTokenSeconds * 1000),
    });
    response.refresh_token = minted.secret;
  }
  return response;
}

/**
 * RFC 7009 §2.1: revokes the grant behind a refresh or access token of this client (revoking
 * either ends both, as §2.1 recommends). Unknown tokens are not an error (§2.2).
 * DEVIATION: a valid token of another client is ignored rather than refused, so the endpoint
 * does not tell a client that someone else's token exists.
 */
export async function revokeToken(deps: TokenDeps, client: OAuthClientRow, token: string): Promise<void> {
  const parsed = parseSecret(token);
  let grantId: string | null = null;
  if (parsed?.kind === REFRESH_KIND) {
    const row = await findRefreshToken(deps.sql, `ort_${parsed.ulid}`);
    if (row && secretMatches(token, row.token_hash)) grantId = row.grant_id;
  } else {
    const claims = await readAccessToken(deps, token, { allowExpired: true });
    if (claims && claims.client_id === client.id) grantId = claims.grant_id;
  }
  if (!grantId) return;
  const grant = await findGrant(deps.sql, grantId);
  if (grant && grant.client_id === client.id) await revokeGrant(deps.sql, grant.id, 'revoked by the client');
}
