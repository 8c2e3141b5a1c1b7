// A real OpenID provider (panva/oidc-provider) for SSO tests. Its login and consent steps are
// answered at once for `account` (as if the person typed their password at the IdP), so a test
// drives the browser round trip over plain HTTP.
import Provider from 'oidc-provider';
import { listen } from './http-util.ts';

export interface IdpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  /** Group names the IdP asserts (a `groups` claim, under the profile scope). */
  groups?: string[];
}

export interface OidcPeer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the IdP next. */
  account: IdpAccount;
  close(): Promise<void>;
}

export async function startOidcProvider(redirectUri: string): Promise<OidcPeer> {
  let handle:
    | ((
        req: Parameters<Parameters<typeof listen>[0]>[0],
        res: Parameters<Parameters<typeof listen>[0]>[1],
      ) => Promise<void>)
    | null = null;
  const server = await listen((req, res) => handle!(req, res));
  const peer: OidcPeer = {
    issuer: server.url,
    clientId: 'countersign',
    clientSecret: 'idp-client-secret-for-tests-only',
    account: { sub: 'idp-user-1', email: 'sso.user@example.test', email_verified: true, name: 'SSO User' },
    close: () => server.close(),
  };
  const provider = new Provider(server.url, {
    clients: [
      {
        client_id: peer.clientId,
        client_secret: peer.clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ ...peer.account, sub: id }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    cookies: { keys: ['oidc-peer-cookie-key'] },
  });
  const callback = provider.callback();
  handle = async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      return provider.interactionFinished(
        req,
        res,
        { login: { accountId: peer.account.sub } },
        { mergeWithLastSubmission: false },
      );
    }
    const grant = new provider.Grant({
      accountId: details.session!.accountId,
      clientId: String(details.params.client_id),
    });
    if (details.prompt.details.missingOIDCScope)
      grant.addOIDCScope(details.prompt.details.missingOIDCScope.join(' '));
    if (details.prompt.details.missingOIDCClaims)
      grant.addOIDCClaims(details.prompt.details.missingOIDCClaims);
    const grantId = await grant.save();
    return provider.interactionFinished(
      req,
      res,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  };
  return peer;
}
