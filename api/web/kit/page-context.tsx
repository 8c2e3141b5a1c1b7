// What every signed-in page shares: the session check, the form CSRF check, and the frame.
import { createHmac } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Child } from 'hono/jsx';
import type { Caller } from '../../../audit/actors.ts';
import { AppError } from '../../../core/errors.ts';
import { authenticateSession } from '../../../identity/authenticate.ts';
import type { UserPrincipal } from '../../../identity/principal.ts';
import type { Sql } from '../../../store/db.ts';
import type { Role } from '../../../store/users.ts';
import { csrfMatches } from '../../middleware/auth.ts';
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
    /** Drawn above the page's own content when set (the first-run checklist on the landing page). */
    banner?: Child;
    /**
     * Set by routes that only run, review or follow queries (api/middleware/access-settled.ts
     * queryOnly): their answers need not wait for the access caches.
     */
    accessUnchanged?: boolean;
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
    const unsigned = flashGuard(c);
    if (unsigned) return unsigned;
    // Pages carry a CSRF token and personal data: never cached (never framed: api/middleware/csp.ts).
    c.header('cache-control', 'no-store');
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
      {c.get('banner') ?? null}
      {body}
    </Layout>,
    status,
  );
}

/**
 * 303 back to a page with a one-line message (Post/Redirect/Get: a reload never re-posts). The
 * message rides in the query with a MAC under the session's own CSRF token, so only this service,
 * for the current session, puts words on a page: a link someone else made cannot (see `flashGuard`).
 */
export function redirectWith(c: PageContext, path: string, kind: FlashKind, message: string) {
  const url = new URL(path, 'http://page.invalid');
  for (const k of FLASH_KINDS) {
    if (url.searchParams.has(k)) url.searchParams.delete(k);
    if (url.searchParams.has(`${k}_sig`)) url.searchParams.delete(`${k}_sig`);
  }
  const sig = flashSignature(c.get('csrfToken'), kind, message);
  const flash = `${kind}=${encodeURIComponent(message)}&${kind}_sig=${sig}`;
  return c.redirect(`${url.pathname}${url.search ? `${url.search}&` : '?'}${flash}${url.hash}`, 303);
}

const FLASH_KINDS = ['notice', 'error'] as const;
type FlashKind = (typeof FLASH_KINDS)[number];

function flashSignature(key: string, kind: FlashKind, message: string): string {
  return createHmac('sha256', key).update(`flash\n${kind}\n${message}`).digest('base64url');
}

/**
 * A page's `?notice=` / `?error=` is shown only when its MAC matches the current session; otherwise the
 * browser is sent to the same page without it, so a crafted link never puts its text on an admin
 * page. Null when the request may go on.
 */
function flashGuard(c: PageContext): Response | null {
  if (c.req.method !== 'GET') return null;
  const url = new URL(c.req.url);
  let forged = false;
  for (const kind of FLASH_KINDS) {
    const message = url.searchParams.get(kind);
    const sig = url.searchParams.get(`${kind}_sig`);
    if (message === null && sig === null) continue;
    const expected = flashSignature(c.get('csrfToken'), kind, message ?? '');
    if (message !== null && sig !== null && csrfMatches(sig, expected)) continue;
    forged = true;
    url.searchParams.delete(kind);
    url.searchParams.delete(`${kind}_sig`);
  }
  return forged ? c.redirect(`${url.pathname}${url.search}`, 302) : null;
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

/** The signed-in person as a domain function's caller (audit/actors.ts). */
export function pageCaller(c: PageContext): Caller<ReturnType<typeof pageActor>> {
  return { orgId: c.get('principal').orgId, actor: pageActor(c), origin: 'user' };
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
