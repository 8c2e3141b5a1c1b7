// What every signed-in page shares: the session check, the form CSRF check, and the frame.
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Child } from 'hono/jsx';
import { AppError } from '../../core/errors.ts';
import { authenticateSession } from '../../identity/authenticate.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import type { Sql } from '../../store/db.ts';
import type { Role } from '../../store/users.ts';
import { csrfMatches } from '../middleware/auth.ts';
import { Layout, type Section } from './layout.tsx';

/** Hono environment of the page routes: always a person, with their session's CSRF token. */
export interface PageEnv {
  Variables: {
    principal: UserPrincipal;
    csrfToken: string;
    /** The urlencoded form of a POST, already read for the CSRF check. */
    form: Record<string, string>;
    requestId: string;
    sessionCookie: string;
  };
}
export type PageContext = Context<PageEnv>;

/**
 * Signed-out visitors go to the login page and come back (`next`, same-origin only). A POST
 * must carry the session's CSRF token in the `_csrf` field: the cookie rides along on
 * cross-site requests, the token does not (OWASP synchronizer token).
 */
export function pageSession(sql: Sql): MiddlewareHandler<PageEnv> {
  return async function requirePageSession(c, next) {
    const cookie = getCookie(c, c.get('sessionCookie'));
    const session = cookie ? await authenticateSession(sql, cookie) : null;
    if (!session) {
      const url = new URL(c.req.url);
      const back = c.req.method === 'GET' ? url.pathname + url.search : url.pathname;
      return c.redirect(`/login?next=${encodeURIComponent(back)}`, c.req.method === 'GET' ? 302 : 303);
    }
    c.set('principal', session.principal);
    c.set('csrfToken', session.csrfToken);
    c.set('form', {});
    if (c.req.method === 'POST') {
      const body = await c.req.parseBody();
      const form: Record<string, string> = {};
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string') form[k] = v;
      if (!csrfMatches(form._csrf, session.csrfToken)) {
        return render(
          c,
          null,
          'Not allowed',
          <p class="error">
            This form expired or did not come from Countersign. Go back, reload and try again.
          </p>,
          403,
        );
      }
      c.set('form', form);
    }
    // Pages carry a CSRF token and personal data: never cached, never framed.
    c.header('cache-control', 'no-store');
    c.header('content-security-policy', "frame-ancestors 'none'");
    await next();
  };
}

/** Draws a page inside the app shell. */
export function render(
  c: PageContext,
  active: Section | null,
  title: string,
  body: Child,
  status: 200 | 400 | 403 | 404 | 409 | 422 | 503 = 200,
) {
  const p = c.get('principal');
  return c.html(
    <Layout
      title={title}
      user={{ email: p.email, role: p.role }}
      csrf={c.get('csrfToken')}
      {...(active ? { active } : {})}
    >
      {body}
    </Layout>,
    status,
  );
}

/** 303 back to a page with a one-line message (Post/Redirect/Get: a reload never re-posts). */
export function redirectWith(c: PageContext, path: string, kind: 'notice' | 'error', message: string) {
  const sep = path.includes('?') ? '&' : '?';
  return c.redirect(`${path}${sep}${kind}=${encodeURIComponent(message)}`, 303);
}

/** The message an application error carries for people (its detail), else a generic one. */
export function messageOf(err: unknown): string {
  return err instanceof AppError ? err.detail : 'Something went wrong; try again.';
}

/** Runs a page action; an application error becomes a message on the page it came from. */
export async function attempt<T>(
  fn: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: AppError }> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err };
    throw err;
  }
}

/** The signed-in person as the domain functions take them (a page is always a person). */
export function pageActor(c: PageContext): { kind: 'user'; userId: string; role: Role } {
  const p = c.get('principal');
  return { kind: 'user', userId: p.userId, role: p.role };
}

/**
 * Admin pages (people, databases, organization): a member gets a 403 page saying what the pages
 * are for. The domain functions check the role again; this only keeps the forms out of reach.
 */
export function adminPagesOnly(what: string, section: Section | null = null): MiddlewareHandler<PageEnv> {
  return async function requireAdminPage(c, next) {
    if (c.get('principal').role === 'member')
      return render(c, section, 'Not allowed', <p class="error">Only admins {what}.</p>, 403);
    await next();
  };
}
