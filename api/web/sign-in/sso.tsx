import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Deps } from '../../../core/deps.ts';
import { finishSsoLogin, SsoError, SsoLinkRequired, startSsoLogin } from '../../../identity/sso.ts';
import { sealPendingLink, ssoLinkCookieName } from '../../../identity/sso-accounts.ts';
import type { AppEnv } from '../../env.ts';
import { ErrorCard, page } from '../../oauth/pages.tsx';
import { endPresentedSession, safeNext, setSessionCookie } from './session.tsx';

const SSO_COOKIE = 'cs_sso';

/** SSO sign-in: `GET /login/sso?org=…` and `GET /login/sso/callback`. */
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
    // password (api/web/sign-in/session.tsx); the cookie is sealed and, under https, __Host- bound.
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

  return app;
}
