import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { requestPasswordReset } from '../../../identity/mail.ts';
import type { AppEnv } from '../../env.ts';
import { clientAddress } from '../../middleware/client-address.ts';
import { fromOwnOrigin } from '../../middleware/same-origin.ts';
import { Layout } from '../kit/layout.tsx';

/**
 * "Forgot your password?" on the sign-in page. With mail configured the link is e-mailed to the
 * address, whatever it is, the answer is the same (no account enumeration); without mail an
 * admin issues the link from the People page, so the page says to ask one.
 */
export function forgotPasswordRoutes(deps: Pick<Deps, 'sql' | 'config' | 'logger' | 'mailer'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const noStore = { 'cache-control': 'no-store' };

  app.get('/forgot-password', (c) => c.html(<Forgot mail={Boolean(deps.mailer)} />, 200, noStore));

  app.post('/forgot-password', async (c) => {
    if (!deps.mailer) return c.html(<Forgot mail={false} />, 200, noStore);
    if (!fromOwnOrigin(c, deps.config.baseUrl)) return c.html(<Forgot mail />, 403, noStore);
    const form = await c.req.parseBody();
    const email = typeof form.email === 'string' ? form.email.replaceAll('\0', '').trim().slice(0, 320) : '';
    if (!/^[^\s@]+@[^\s@]+$/.test(email))
      return c.html(<Forgot mail error="Give the e-mail address you sign in with." />, 422, noStore);
    const wait = await requestPasswordReset(
      {
        sql: deps.sql,
        mailer: deps.mailer,
        logger: deps.logger,
        baseUrl: deps.config.baseUrl,
        limits: deps.config.rateLimits,
      },
      email,
      clientAddress(c, deps.config.trustedProxies),
    );
    if (wait !== null) {
      c.header('retry-after', String(wait));
      return c.html(<Forgot mail error="Too many requests from here. Try again later." />, 429, noStore);
    }
    return c.html(<Sent />, 200, noStore);
  });
  return app;
}

function Forgot(props: { mail: boolean; error?: string }) {
  return (
    <Layout title="Forgot your password?">
      {props.mail ? (
        <form class="card" method="post" action="/forgot-password">
          <h1>Forgot your password?</h1>
          {props.error ? <p class="error">{props.error}</p> : null}
          <p>We e-mail a link to choose a new one. It works once, for an hour.</p>
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required />
          <button type="submit">E-mail me a link</button>
          <p class="small">
            <a href="/login">Back to sign-in</a>
          </p>
        </form>
      ) : (
        <section class="card">
          <h1>Forgot your password?</h1>
          <p>
            Ask an admin of your organization: on the People page they make a one-time link for you to choose
            a new password.
          </p>
          <p class="small">
            <a href="/login">Back to sign-in</a>
          </p>
        </section>
      )}
    </Layout>
  );
}

function Sent() {
  return (
    <Layout title="Check your e-mail">
      <section class="card">
        <h1>Check your e-mail</h1>
        <p>
          If an account uses this address, a link to choose a new password is on its way. It works once, for
          an hour.
        </p>
        <p class="small">
          <a href="/login">Back to sign-in</a>
        </p>
      </section>
    </Layout>
  );
}
