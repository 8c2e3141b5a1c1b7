import type { Context } from 'hono';
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Config } from '../../../config/env.ts';
import type { Deps } from '../../../core/deps.ts';
import { authenticateSession } from '../../../identity/authenticate.ts';
import { accountIdsForEmail } from '../../../identity/directory.ts';
import {
  DEVICE_COOKIE_SECONDS,
  deviceBucket,
  deviceCookieName,
  exemptingDevice,
  issueDeviceCookie,
  readDeviceCookie,
} from '../../../identity/known-device.ts';
import { endSession, signInWithPassword } from '../../../identity/manage.ts';
import { ssoChoices } from '../../../identity/sso.ts';
import { confirmPendingLink, ssoLinkCookieName } from '../../../identity/sso-accounts.ts';
import { accountKey, buckets, forgive, recordFailure, retryAfter } from '../../../identity/throttle.ts';
import type { UserRow } from '../../../store/users.ts';
import type { AppEnv } from '../../env.ts';
import { csrfMatches, sessionCookieName } from '../../middleware/auth.ts';
import { clientAddress } from '../../middleware/client-address.ts';
import { contentSecurityPolicy, formActionSource } from '../../middleware/csp.ts';
import { fromOwnOrigin } from '../../middleware/same-origin.ts';
import { Layout } from '../kit/layout.tsx';

/** Password sign-in and sign-out for the web pages; both end in the same cookie session. */
export function sessionRoutes(deps: Pick<Deps, 'sql' | 'config' | 'keyring'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { baseUrl, rateLimits, trustedProxies } = deps.config;

  app.get('/login', async (c) => {
    const next = safeNext(c.req.query('next'), baseUrl);
    loginPolicy(c, next, baseUrl);
    return c.html(
      <LoginPage
        next={next}
        sso={await ssoChoices(deps.sql)}
        {...(c.req.query('notice') === 'password-set'
          ? { notice: 'Your password is set. Sign in with it.' }
          : {})}
      />,
    );
  });

  app.post('/login', async (c) => {
    // Login CSRF: a form on another site must not sign the visitor into the attacker's account.
    if (!fromOwnOrigin(c, baseUrl))
      return c.html(<LoginPage next="/" error="This sign-in form did not come from Countersign." />, 403);
    const form = await c.req.parseBody();
    // A NUL cannot reach PostgreSQL text; such an address names no account.
    const email = typeof form.email === 'string' ? form.email.replaceAll('\0', '').trim() : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined, baseUrl);
    const key = await accountKey(deps.sql, email);
    const address = clientAddress(c, trustedProxies);
    const atAddress = buckets.accountAtAddress(rateLimits, key, address);
    const account = buckets.account(rateLimits, key);
    const fromAddress = buckets.address(rateLimits, address);
    // A browser that signed in to this account before skips the account-wide backoff, which
    // strangers elsewhere can keep closed (identity/known-device.ts); never the address limits.
    const presented = readDeviceCookie(deps.keyring, getCookie(c, deviceCookieName(baseUrl)));
    const device = presented
      ? await exemptingDevice(deps.sql, rateLimits, presented, await accountIdsForEmail(deps.sql, email))
      : null;
    const limited = device ? [atAddress, fromAddress] : [atAddress, account, fromAddress];
    const wait = await retryAfter(deps.sql, rateLimits, limited);
    if (wait !== null) {
      c.header('retry-after', String(wait));
      return c.html(
        <LoginPage
          next={next}
          email={email}
          error={`Too many failed sign-ins. Try again in ${duration(wait)}.`}
        />,
        429,
      );
    }
    const session = await signInWithPassword(deps.sql, email, password, c.req.header('user-agent') ?? '');
    if (!session) {
      await recordFailure(deps.sql, rateLimits, [
        atAddress,
        account,
        fromAddress,
        ...(device ? [deviceBucket(rateLimits, device)] : []),
      ]);
      loginPolicy(c, next, baseUrl);
      // The address stays typed: a mistyped password is the usual cause, and it is not a secret.
      return c.html(<LoginPage next={next} email={email} error="Wrong email or password." />, 401);
    }
    const ownDevice = presented?.userId === session.user.id ? presented : null;
    await forgive(deps.sql, [
      atAddress,
      account,
      ...(ownDevice ? [deviceBucket(rateLimits, ownDevice)] : []),
    ]);
    setDeviceCookie(c, deps, session.user.id, ownDevice);
    await linkBroughtSso(c, deps, session.user);
    await endPresentedSession(c, deps);
    setSessionCookie(c, deps.config, session.cookie);
    // 303: the browser follows with GET, so a reload never re-posts the password.
    return c.redirect(next, 303);
  });

  // Sign-out needs the session's CSRF token too: a cross-site form must not end a session. The
  // Lax cookie does not ride on a cross-site POST, so the origin is checked first, or the answer
  // would still clear the cookie in the visitor's browser.
  app.post('/logout', async (c) => {
    if (!fromOwnOrigin(c, baseUrl))
      return c.html(<LoginPage next="/" error="This sign-out form did not come from Countersign." />, 403);
    const cookie = getCookie(c, c.get('sessionCookie'));
    const session = cookie ? await authenticateSession(deps.sql, cookie) : null;
    if (session) {
      const form = await c.req.parseBody();
      if (!csrfMatches(typeof form._csrf === 'string' ? form._csrf : undefined, session.csrfToken))
        return c.html(<LoginPage next="/" error="This sign-out form did not come from Countersign." />, 403);
      await endSession(deps.sql, session.principal.credentialId);
    }
    deleteCookie(c, c.get('sessionCookie'), {
      path: '/',
      secure: c.get('sessionCookie').startsWith('__Host-'),
    });
    return c.redirect('/login', 303);
  });
  return app;
}

/**
 * An SSO sign-in that met this person's existing account left a sealed cookie in this browser
 * (api/web/sign-in/sso.tsx); their password now confirms the link (identity/sso-accounts.ts).
 */
async function linkBroughtSso(
  c: Context<AppEnv>,
  deps: Pick<Deps, 'sql' | 'config' | 'keyring'>,
  user: UserRow,
): Promise<void> {
  const name = ssoLinkCookieName(deps.config.baseUrl);
  const sealed = getCookie(c, name);
  if (sealed === undefined) return;
  await confirmPendingLink(deps, sealed, user);
  deleteCookie(c, name, { path: '/', secure: name.startsWith('__Host-') });
}

/** A sign-in replaces the session the browser had: the old one ends rather than lingering. */
export async function endPresentedSession(c: Context<AppEnv>, deps: Pick<Deps, 'sql'>): Promise<void> {
  const old = getCookie(c, c.get('sessionCookie'));
  const session = old ? await authenticateSession(deps.sql, old) : null;
  if (session) await endSession(deps.sql, session.principal.credentialId);
}

/**
 * HttpOnly keeps scripts away from it; SameSite=Lax keeps it off cross-site POSTs. Under https
 * the name carries the `__Host-` prefix, so the browser accepts it only as Secure, for this
 * host and path / — a sibling subdomain cannot plant a session of its own (RFC 6265bis §4.1.3.2).
 */
export function setSessionCookie(c: Context<AppEnv>, config: Pick<Config, 'baseUrl'>, value: string): void {
  setCookie(c, sessionCookieName(config.baseUrl), value, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: config.baseUrl.startsWith('https://'),
    path: '/',
    maxAge: 12 * 3600,
  });
}

/**
 * Marks this browser as a known device of the account (identity/known-device.ts), for a year from
 * its latest sign-in; a browser that was already this account's device keeps its id. A browser
 * is one account's device at a time: signing in to another account moves it there.
 */
function setDeviceCookie(
  c: Context<AppEnv>,
  deps: Pick<Deps, 'config' | 'keyring'>,
  userId: string,
  known: { deviceId: string } | null,
): void {
  setCookie(
    c,
    deviceCookieName(deps.config.baseUrl),
    issueDeviceCookie(deps.keyring, userId, known?.deviceId),
    {
      httpOnly: true,
      sameSite: 'Lax',
      secure: deps.config.baseUrl.startsWith('https://'),
      path: '/',
      maxAge: DEVICE_COOKIE_SECONDS,
    },
  );
}

/**
 * Signing in on the way to an OAuth authorization may end, redirect after redirect, at the
 * client's redirect URI (consent already given), and browsers hold every redirect after a form
 * submission to its form-action. The URI is only allowed as a destination here; whether the
 * service redirects there at all is decided by /oauth/authorize against the registration.
 */
function loginPolicy(c: Context<AppEnv>, next: string, baseUrl: string): void {
  const url = new URL(next, baseUrl);
  if (url.pathname !== '/oauth/authorize') return;
  const source = formActionSource(url.searchParams.get('redirect_uri') ?? '');
  if (source) c.header('content-security-policy', contentSecurityPolicy([source]));
}

function duration(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? 'a second' : `${seconds} seconds`;
  const m = Math.ceil(seconds / 60);
  return m === 1 ? 'a minute' : `${m} minutes`;
}

/**
 * Only paths on this service: an open redirect after login would hand phishers a trusted URL.
 * The target is resolved as the browser will resolve it (WHATWG URL: tabs and newlines are
 * dropped, a backslash is a slash, `/./` and `%2e` collapse) and kept only when it stays on
 * our origin and cannot be read as protocol-relative. Control characters are refused outright,
 * which also keeps them out of the Location header.
 */
export function safeNext(next: string | undefined, baseUrl: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (!next?.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, baseUrl);
  } catch {
    return '/';
  }
  if (url.origin !== new URL(baseUrl).origin) return '/';
  const path = url.pathname + url.search + url.hash;
  // `/.//evil` resolves to the path `//evil`, which a Location header reads as another host.
  if (path.startsWith('//') || /^\/%2f/i.test(path) || /^\/%5c/i.test(path)) return '/';
  return path;
}

function LoginPage(props: {
  next: string;
  /** The address the person typed, kept after a refusal. */
  email?: string;
  error?: string;
  notice?: string;
  sso?: Array<{ org_id: string; org_name: string }>;
}) {
  return (
    <Layout title="Sign in">
      <form class="card" method="post" action="/login">
        <h1>Sign in</h1>
        {props.error ? (
          <p class="error" role="alert">
            {props.error}
          </p>
        ) : null}
        {props.notice ? (
          <p class="notice" role="status">
            {props.notice}
          </p>
        ) : null}
        <input type="hidden" name="next" value={props.next} />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={props.email ?? ''}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
        <p class="small">
          <a href="/forgot-password">Forgot your password?</a>
        </p>
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
