import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import * as v from 'valibot';
import type { Deps } from '../../core/deps.ts';
import {
  finishSsoLogin,
  getSsoConfig,
  removeSsoConfig,
  SsoError,
  SsoLinkRequired,
  setSsoConfig,
  ssoRedirectUri,
  startSsoLogin,
} from '../../identity/sso.ts';
import { sealPendingLink, ssoLinkCookieName } from '../../identity/sso-accounts.ts';
import type { SsoConfigRow } from '../../store/sso.ts';
import type { AppEnv } from '../env.ts';
import { notFound } from '../errors.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { clientAddress } from '../middleware/client-address.ts';
import { ErrorCard, page } from '../oauth/pages.tsx';
import { doc } from '../openapi.ts';
import { jsonBody } from '../validate.ts';
import { endPresentedSession, safeNext, setSessionCookie } from './session.tsx';

const SSO_COOKIE = 'cs_sso';

export const SsoInput = v.object({
  issuer: v.pipe(v.string(), v.url('must be the issuer URL of an OpenID provider')),
  client_id: v.pipe(v.string(), v.minLength(1), v.maxLength(500)),
  client_secret: v.pipe(v.string(), v.minLength(1), v.maxLength(2000)),
  provision_role: v.optional(v.nullable(v.picklist(['admin', 'member'])), null),
  /** A claim (e.g. `groups`) whose values pick a new account's role through `role_map`. */
  role_claim: v.optional(
    v.nullable(v.pipe(v.string(), v.trim(), v.regex(/^[\w.:-]{1,100}$/, 'must be a claim name'))),
    null,
  ),
  role_map: v.optional(
    v.record(
      v.pipe(v.string(), v.maxLength(200)),
      v.picklist(['admin', 'member'], 'must be admin or member'),
    ),
    {},
  ),
  /** Email domains the organization owns: a verified email in one links an existing account at SSO sign-in. */
  domains: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string(),
          v.trim(),
          v.toLowerCase(),
          v.regex(
            /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
            'must be a domain name',
          ),
        ),
      ),
      v.maxLength(50),
    ),
    [],
  ),
  enabled: v.optional(v.boolean(), true),
  /** The super admin's own password, entered again: SSO decides who signs in as whom. */
  current_password: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});
const SsoRemoval = v.object({ current_password: v.optional(v.pipe(v.string(), v.maxLength(1000))) });

/**
 * SSO sign-in (`GET /login/sso?org=…`, `GET /login/sso/callback`) and the admin API to set it
 * (`GET/PUT/DELETE /api/v1/sso`).
 */
export function ssoRoutes(deps: Pick<Deps, 'sql' | 'keyring' | 'config' | 'logger'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const secure = deps.config.baseUrl.startsWith('https://');

  app.get('/login/sso', async (c) => {
    try {
      const started = await startSsoLogin(
        deps,
        c.req.query('org') ?? '',
        safeNext(c.req.query('next'), deps.config.baseUrl),
      );
      // Lax: the IdP sends the browser back with a top-level GET, which carries Lax cookies.
      setCookie(c, SSO_COOKIE, started.cookie, {
        httpOnly: true,
        sameSite: 'Lax',
        secure,
        path: '/login/sso',
        maxAge: 600,
      });
      return c.redirect(started.url, 302);
    } catch (err) {
      return ssoFailure(c, err);
    }
  });

  app.get('/login/sso/callback', async (c) => {
    try {
      const done = await finishSsoLogin(deps, getCookie(c, SSO_COOKIE), new URL(c.req.url));
      deleteCookie(c, SSO_COOKIE, { path: '/login/sso' });
      await endPresentedSession(c, deps);
      setSessionCookie(c, deps.config, done.cookie);
      return c.redirect(done.next, 302);
    } catch (err) {
      return ssoFailure(c, err);
    }
  });

  function ssoFailure(c: Context<AppEnv>, err: unknown) {
    if (!(err instanceof SsoError)) throw err;
    deps.logger.info({ reason: err.reason }, 'sso sign-in refused');
    // The account is someone's already: this browser may link it by signing in with its
    // password (api/routes/session.tsx); the cookie is sealed and, under https, __Host- bound.
    if (err instanceof SsoLinkRequired) {
      setCookie(c, ssoLinkCookieName(deps.config.baseUrl), sealPendingLink(deps.keyring, err.pending), {
        httpOnly: true,
        sameSite: 'Lax',
        secure,
        path: '/',
        maxAge: 600,
      });
      return page(
        c,
        'Link single sign-on',
        <section class="card">
          <h1>Link single sign-on to your account</h1>
          <p class="error">{err.userMessage}</p>
          <p>
            <a href="/login">Sign in with your password</a>
          </p>
        </section>,
        403,
        false,
      );
    }
    return page(
      c,
      'Sign-in failed',
      <ErrorCard title="Sign-in failed" message={err.userMessage} />,
      400,
      false,
    );
  }

  const throttleOf = (c: Context) => ssoThrottle(c, deps.config);
  const admin = [authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin()] as const;
  app.get(
    '/api/v1/sso',
    doc('SSO', 'Get the OIDC single sign-on settings of the organization', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    ...admin,
    async (c) => {
      const cfg = await getSsoConfig(deps.sql, c.get('principal').orgId);
      if (!cfg) throw notFound('single sign-on is not configured');
      return c.json(shape(cfg, deps.config.baseUrl));
    },
  );
  app.put(
    '/api/v1/sso',
    doc('SSO', 'Set the OIDC single sign-on settings (super admin, with current_password; secret sealed)', {
      auth: ['bearer', 'session'],
      body: SsoInput,
    }),
    ...admin,
    async (c) => {
      const { current_password, ...input } = await jsonBody(c, SsoInput);
      const p = c.get('principal');
      const cfg = await setSsoConfig(
        deps,
        p.orgId,
        { principal: p, currentPassword: current_password, throttle: throttleOf(c) },
        input,
      );
      return c.json(shape(cfg, deps.config.baseUrl));
    },
  );
  app.delete(
    '/api/v1/sso',
    doc('SSO', 'Turn single sign-on off (super admin, with current_password in the body)', {
      auth: ['bearer', 'session'],
      body: SsoRemoval,
    }),
    ...admin,
    async (c) => {
      // The body is optional here: a key or a non-super-admin is refused for who it is (403).
      const body = (await c.req.text()).trim() === '' ? {} : await jsonBody(c, SsoRemoval);
      const p = c.get('principal');
      if (
        !(await removeSsoConfig(deps.sql, p.orgId, {
          principal: p,
          currentPassword: body.current_password,
          throttle: throttleOf(c),
        }))
      )
        throw notFound('single sign-on is not configured');
      return c.body(null, 204);
    },
  );
  return app;
}

/** The sign-in limits a password entered again for an SSO change counts in (identity/sso-authority.ts). */
export function ssoThrottle(c: Context, config: Pick<Deps['config'], 'rateLimits' | 'trustedProxies'>) {
  return { limits: config.rateLimits, address: clientAddress(c, config.trustedProxies) };
}

/** The configuration as the API shows it: never the client secret. */
function shape(cfg: SsoConfigRow, baseUrl: string) {
  return {
    id: cfg.id,
    issuer: cfg.issuer,
    client_id: cfg.client_id,
    provision_role: cfg.provision_role,
    role_claim: cfg.role_claim,
    role_map: cfg.role_map,
    domains: cfg.domains,
    enabled: cfg.enabled,
    redirect_uri: ssoRedirectUri(baseUrl),
    updated_at: cfg.updated_at.toISOString(),
  };
}
