// Shared bits of the authorization server's web pages.
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Child } from 'hono/jsx';
import { authenticateSession } from '../../identity/authenticate.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import type { Tx } from '../../store/db.ts';
import { csrfMatches } from '../middleware/auth.ts';
import { Layout } from '../web/kit/layout.tsx';

/** The signed-in user of a page request, or null. */
export async function pageSession(
  c: Context,
  sql: Tx,
): Promise<{ principal: UserPrincipal; csrfToken: string } | null> {
  const cookie = getCookie(c, c.get('sessionCookie'));
  return cookie ? authenticateSession(sql, cookie) : null;
}

/** A form POST must carry the session's CSRF token in the `csrf` field (forms cannot set headers). */
export function formCsrfOk(form: Record<string, unknown>, csrfToken: string): boolean {
  return typeof form.csrf === 'string' && csrfMatches(form.csrf, csrfToken);
}

/**
 * Renders a page that must never be framed (RFC 9700 §4.16 clickjacking: consent is a click
 * target; the strict policy of api/middleware/csp.ts says frame-ancestors 'none') nor cached
 * (it carries a CSRF token).
 */
export function page(
  c: Context,
  title: string,
  body: Child,
  status: 200 | 400 | 403 = 200,
  signedIn = true,
  csrf?: string,
): Response | Promise<Response> {
  c.header('cache-control', 'no-store');
  return c.html(
    <Layout title={title} signedIn={signedIn} {...(csrf ? { csrf } : {})}>
      {body}
    </Layout>,
    status,
  );
}

export function ErrorCard(props: { title: string; message: string }) {
  return (
    <section class="card">
      <h1>{props.title}</h1>
      <p class="error">{props.message}</p>
      <p>You can close this window and try connecting again from your application.</p>
    </section>
  );
}
