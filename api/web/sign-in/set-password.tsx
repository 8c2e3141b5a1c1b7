import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { MIN_PASSWORD_LENGTH, startSession } from '../../../identity/manage.ts';
import { checkSetupLink, setPasswordWithLink } from '../../../identity/people.ts';
import type { AppEnv } from '../../env.ts';
import { fromOwnOrigin } from '../../middleware/same-origin.ts';
import { Layout } from '../kit/layout.tsx';
import { endPresentedSession, setSessionCookie } from './session.tsx';

/**
 * The page a one-time link from an invitation or an admin's reset opens. The link's
 * secret rides in the form, not in a cookie; the page is never cached and sends no referrer.
 */
export function setPasswordRoutes(deps: Pick<Deps, 'sql' | 'config'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const noStore = { 'cache-control': 'no-store' };

  app.get('/set-password', async (c) => {
    const token = c.req.query('token') ?? '';
    const user = await checkSetupLink(deps.sql, token);
    if (!user) return c.html(<Expired />, 410, noStore);
    return c.html(<SetPassword token={token} email={user.email} />, 200, noStore);
  });

  app.post('/set-password', async (c) => {
    if (!fromOwnOrigin(c, deps.config.baseUrl)) return c.html(<Expired />, 403, noStore);
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const user = await checkSetupLink(deps.sql, token);
    if (!user) return c.html(<Expired />, 410, noStore);
    const outcome = await setPasswordWithLink(deps.sql, token, password);
    if (outcome === 'too_short')
      return c.html(
        <SetPassword
          token={token}
          email={user.email}
          error={`Use at least ${MIN_PASSWORD_LENGTH} characters.`}
        />,
        422,
        noStore,
      );
    if (outcome === 'invalid_link') return c.html(<Expired />, 410, noStore);
    // The link proved who they are and they just chose the password: they are signed in (a new
    // session; setting the password ended every earlier one, and the browser's is replaced).
    const session = await startSession(deps.sql, user.id, c.req.header('user-agent') ?? '');
    await endPresentedSession(c, deps);
    setSessionCookie(c, deps.config, session.cookie);
    return c.redirect('/dashboards', 303);
  });
  return app;
}

function SetPassword(props: { token: string; email: string; error?: string }) {
  return (
    <Layout title="Choose a password">
      <form class="card" method="post" action="/set-password">
        <h1>Choose a password</h1>
        <p>
          For <strong>{props.email}</strong>.
        </p>
        {props.error ? <p class="error">{props.error}</p> : null}
        <input type="hidden" name="token" value={props.token} />
        <input type="hidden" name="email" value={props.email} autocomplete="username" />
        <label for="password">New password (at least {MIN_PASSWORD_LENGTH} characters)</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minlength={MIN_PASSWORD_LENGTH}
          required
        />
        <button type="submit">Set password</button>
      </form>
    </Layout>
  );
}

function Expired() {
  return (
    <Layout title="Link expired">
      <section class="card">
        <h1>This link no longer works</h1>
        <p>
          It was used already, replaced by a newer one, or expired. Ask an admin for a new link, or{' '}
          <a href="/forgot-password">ask for one by e-mail</a>.
        </p>
      </section>
    </Layout>
  );
}
