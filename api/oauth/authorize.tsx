import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { clientIdentity } from '../../identity/cimd/document.ts';
import {
  AuthorizationPageError,
  type AuthorizationRequest,
  approve,
  checkAuthorizationRequest,
  deny,
  hasConsent,
  RedirectableError,
} from '../../identity/oauth-authorize.ts';
import { redirectDisplay } from '../../identity/oauth-redirect.ts';
import type { AppEnv } from '../env.ts';
import { clientAddress } from '../middleware/client-address.ts';
import { contentSecurityPolicy, formActionSource } from '../middleware/csp.ts';
import { oauthErrorRedirect } from './errors.ts';
import { ErrorCard, formCsrfOk, page, pageSession } from './pages.tsx';

/** Parameters of an authorization request that the consent form carries through. */
const REQUEST_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'state',
  'resource',
] as const;

type AuthorizeDeps = Pick<Deps, 'sql' | 'config' | 'logger'>;

/** GET /oauth/authorize (sign in, then consent) and POST /oauth/authorize (the consent decision). */
export function authorizeRoutes(deps: AuthorizeDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/oauth/authorize', async (c) => {
    const url = new URL(c.req.url);
    const req = await checked(c, deps, url.searchParams);
    if (req instanceof Response) return req;
    const session = await pageSession(c, deps.sql);
    // SPEC.md 5.4.4: the user signs in through the normal login (password or SSO), then returns here.
    if (!session) return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 302);
    if (await hasConsent(deps.sql, session.principal.userId, req)) {
      return c.redirect(await approve(deps, session.principal.userId, req), 302);
    }
    // The decision's 303 goes to the client's redirect URI, checked by the registration above.
    const redirectSource = formActionSource(req.redirectUri);
    c.header('content-security-policy', contentSecurityPolicy(redirectSource ? [redirectSource] : []));
    return page(
      c,
      'Connect an application',
      <Consent
        req={req}
        email={session.principal.email}
        csrf={session.csrfToken}
        consentDays={Math.round(deps.config.oauth.consentSeconds / 86400)}
        refreshDays={Math.round(deps.config.oauth.refreshTokenSeconds / 86400)}
      />,
      200,
      true,
      session.csrfToken,
    );
  });

  app.post('/oauth/authorize', async (c) => {
    const form = await c.req.parseBody();
    const session = await pageSession(c, deps.sql);
    if (!session)
      return page(
        c,
        'Signed out',
        <ErrorCard title="Signed out" message="Your session ended; start again from your application." />,
        403,
        false,
      );
    if (!formCsrfOk(form, session.csrfToken)) {
      return page(
        c,
        'Not allowed',
        <ErrorCard title="Not allowed" message="This form expired or did not come from Countersign." />,
        403,
        false,
      );
    }
    const params = new URLSearchParams();
    for (const key of REQUEST_PARAMS) {
      const value = form[key];
      if (typeof value === 'string') params.set(key, value);
      else if (value !== undefined)
        return page(
          c,
          'Bad request',
          <ErrorCard title="Bad request" message={`The field ${key} is malformed.`} />,
          400,
          false,
        );
    }
    const req = await checked(c, deps, params);
    if (req instanceof Response) return req;
    const target =
      form.decision === 'approve' ? await approve(deps, session.principal.userId, req) : deny(deps, req);
    // RFC 9700 §4.12: after a POST, redirect with 303 so the browser does not re-post the form.
    return c.redirect(target, 303);
  });
  return app;
}

/** Runs the request checks; an unknown client or redirect URI becomes an error page, never a redirect. */
async function checked(
  c: Context,
  deps: AuthorizeDeps,
  params: URLSearchParams,
): Promise<AuthorizationRequest | Response> {
  try {
    return await checkAuthorizationRequest(deps, params, clientAddress(c, deps.config.trustedProxies));
  } catch (err) {
    if (err instanceof AuthorizationPageError) {
      deps.logger.info({ reason: err.reason }, 'authorization request refused');
      return page(
        c,
        'Cannot connect',
        <ErrorCard title="Cannot connect this application" message={err.userMessage} />,
        400,
        false,
      );
    }
    if (err instanceof RedirectableError) return oauthErrorRedirect(c, err, deps.config.baseUrl, deps.logger);
    throw err;
  }
}

function Consent(props: {
  req: AuthorizationRequest;
  email: string;
  csrf: string;
  consentDays: number;
  refreshDays: number;
}) {
  const { req } = props;
  const who = clientIdentity(req.client);
  return (
    <form class="card" method="post" action="/oauth/authorize">
      <h1>Connect {who.name}?</h1>
      <p>
        <strong>{who.name}</strong>
        {who.nameUnverified ? (
          <>
            {' '}
            <span class="unverified bad">(unverified name)</span>
          </>
        ) : null}
        {who.host ? (
          <>
            {' '}
            — published by <strong class="client-host">{who.host}</strong>
          </>
        ) : null}{' '}
        wants to use Countersign as you ({props.email}). It will send you back to{' '}
        <strong>{redirectDisplay(req.redirectUri)}</strong>.
      </p>
      <p>
        It will be able to list the databases you can access that allow AI use, read their schemas, and run
        governed queries with your permissions: reviews, data protection and limits apply as they do to you.
      </p>
      <p>
        Access lasts until you disconnect it in <a href="/settings">Settings → Connected AI clients</a>: it
        stays connected as long as it is used at least every {props.refreshDays} days. Connecting again from
        this same address within {props.consentDays} days will not ask you again; any other address will.
      </p>
      <p class="muted">
        {who.host
          ? `The application describes itself in a document at ${who.host}: that site vouches for it, but the name is the application's own words${who.nameUnverified ? ', and it names another site' : ''}. Connect only if you started this from an application you trust.`
          : 'The application chose its own name; nothing confirms it. Connect only if you started this from an application you trust.'}
      </p>
      <input type="hidden" name="csrf" value={props.csrf} />
      {REQUEST_PARAMS.map((key) => {
        const value = hiddenValue(req, key);
        return value === null ? null : <input type="hidden" name={key} value={value} />;
      })}
      <p class="decision">
        <button type="submit" name="decision" value="approve" class="allow">
          Allow access
        </button>{' '}
        <button type="submit" name="decision" value="deny" class="deny">
          Deny
        </button>
      </p>
    </form>
  );
}

function hiddenValue(req: AuthorizationRequest, key: (typeof REQUEST_PARAMS)[number]): string | null {
  switch (key) {
    case 'client_id':
      return req.client.id;
    case 'redirect_uri':
      return req.redirectUri;
    case 'response_type':
      return 'code';
    case 'code_challenge':
      return req.codeChallenge;
    case 'code_challenge_method':
      return 'S256';
    case 'scope':
      return req.scope;
    case 'state':
      return req.state;
    case 'resource':
      return req.resource;
  }
}
