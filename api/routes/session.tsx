import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Deps } from '../../config/runtime.ts';
import { authenticateSession } from '../../identity/authenticate.ts';
import { endSession, signInWithPassword } from '../../identity/manage.ts';
import { ssoChoices } from '../../identity/sso.ts';
import type { AppEnv } from '../env.ts';
import { SESSION_COOKIE } from '../middleware/auth.ts';
import { Layout } from '../pages/layout.tsx';

/** Password sign-in and sign-out for the web pages; both end in the same cookie session. */
export function sessionRoutes(deps: Pick<Deps, 'sql' | 'config'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const secure = deps.config.baseUrl.startsWith('https://');

  app.get('/login', async (c) =>
    c.html(<LoginPage next={safeNext(c.req.query('next'))} sso={await ssoChoices(deps.sql)} />),
  );

  app.post('/login', async (c) => {
    const form = await c.req.parseBody();
    const email = typeof form.email === 'string' ? form.email : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined);
    const session = await signInWithPassword(deps.sql, email, password);
    if (!session) return c.html(<LoginPage next={next} error="Wrong email or password." />, 401);
    // HttpOnly keeps scripts away from it; SameSite=Lax keeps it off cross-site POSTs;
    // Secure whenever the public URL is https.
    setCookie(c, SESSION_COOKIE, session.cookie, {
      httpOnly: true,
      sameSite: 'Lax',
      secure,
      path: '/',
      maxAge: 12 * 3600,
    });
    // 303: the browser follows with GET, so a reload never re-posts the password.
    return c.redirect(next, 303);
  });

  app.post('/logout', async (c) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) {
      const session = await authenticateSession(deps.sql, cookie);
      if (session) await endSession(deps.sql, session.principal.credentialId);
    }
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/login', 303);
  });
  return app;
}

/** Only same-origin paths: an open redirect after login would hand phishers a trusted URL. */
export function safeNext(next: string | undefined): string {
  if (!next?.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/';
  return next;
}

function LoginPage(props: {
  next: string;
  error?: string;
  sso?: Array<{ org_id: string; org_name: string }>;
}) {
  return (
    <Layout title="Sign in">
      <form class="card" method="post" action="/login">
        <h1>Sign in</h1>
        {props.error ? <p class="error">{props.error}</p> : null}
        <input type="hidden" name="next" value={props.next} />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
        {(props.sso ?? []).map((o) => (
          <p>
            <a class="sso" href={`/login/sso?${new URLSearchParams({ org: o.org_id, next: props.next })}`}>
              Sign in with {o.org_name} SSO
            </a>
          </p>
        ))}
      </form>
    </Layout>
  );
}
