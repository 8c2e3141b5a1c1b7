// Drives the OAuth flow the way an MCP client and a browser do: the SDK's own client auth
// functions for discovery, registration, PKCE and token calls; plain HTTP for login and consent.
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationFull,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { TestService } from '../helpers/service.ts';

export const REDIRECT = 'http://127.0.0.1:33418/callback';

export interface Discovered {
  resource: string;
  issuer: string;
  metadata: AuthorizationServerMetadata;
}

/** RFC 9728 then RFC 8414 discovery, as the SDK does it. */
export async function discover(svc: TestService): Promise<Discovered> {
  const prm = await discoverOAuthProtectedResourceMetadata(`${svc.url}/mcp`);
  const issuer = prm.authorization_servers![0]!;
  const metadata = await discoverAuthorizationServerMetadata(issuer);
  if (!metadata) throw new Error('no authorization server metadata');
  return { resource: prm.resource, issuer, metadata: metadata as AuthorizationServerMetadata };
}

export async function register(
  d: Discovered,
  extra: Partial<OAuthClientMetadata> = {},
): Promise<OAuthClientInformationFull> {
  return registerClient(d.issuer, {
    metadata: d.metadata,
    clientMetadata: {
      client_name: 'Test AI client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'mcp',
      ...extra,
    },
  });
}

/** A browser: remembers cookies by origin and name, and never follows redirects on its own. */
export class Browser {
  private jars = new Map<string, Map<string, string>>();
  constructor(private readonly svc: TestService) {}

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const expired = attrs.some((a) => /^\s*max-age=0$/i.test(a)) || pair!.slice(eq + 1) === '';
      if (expired) jar.delete(pair!.slice(0, eq));
      else jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return res;
  }

  /** Follows redirects (any origin) until a non-redirect answer or a URL for which `stop` is true. */
  async follow(
    url: string,
    stop: (u: URL) => boolean = () => false,
  ): Promise<{ res: Response; url: string }> {
    let current = url;
    for (let i = 0; i < 20; i++) {
      const res = await this.fetch(current);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { res, url: current };
      current = new URL(location, current).toString();
      if (stop(new URL(current))) return { res, url: current };
    }
    throw new Error('too many redirects');
  }

  abs(location: string): string {
    return new URL(location, this.svc.url).toString();
  }

  async signIn(next: string, email: string, password: string): Promise<Response> {
    return this.fetch(`${this.svc.url}/login`, {
      method: 'POST',
      body: new URLSearchParams({ email, password, next }),
    });
  }
}

/** Hidden inputs of the consent form. */
export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[m[1]!] = m[2]!
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#39;/g, "'");
  }
  return fields;
}

/**
 * From the authorization URL to the redirect back to the client: the browser is sent to
 * /login, signs in, comes back, sees the consent screen (unless remembered) and approves.
 */
export async function authorizeInBrowser(
  browser: Browser,
  authorizationUrl: string,
  user: { email: string; password: string },
): Promise<URL> {
  let res = await browser.fetch(authorizationUrl);
  if (res.status === 302 && new URL(browser.abs(res.headers.get('location')!)).pathname === '/login') {
    const next = new URL(browser.abs(res.headers.get('location')!)).searchParams.get('next')!;
    const login = await browser.signIn(next, user.email, user.password);
    if (login.status !== 303) throw new Error(`login answered ${login.status}`);
    res = await browser.fetch(browser.abs(login.headers.get('location')!));
  }
  if (res.status === 200) {
    const fields = formFields(await res.text());
    res = await browser.fetch(browser.abs('/oauth/authorize'), {
      method: 'POST',
      body: new URLSearchParams({ ...fields, decision: 'approve' }),
    });
    if (res.status !== 303) throw new Error(`consent answered ${res.status}`);
  }
  const location = res.headers.get('location');
  if (!location) throw new Error(`authorize answered ${res.status} without a redirect`);
  return new URL(location);
}

/** The whole flow for one user; returns the tokens and what a test needs to go on. */
export async function connect(
  svc: TestService,
  user: { email: string; password: string },
  opts: {
    browser?: Browser;
    client?: OAuthClientInformationFull;
    discovered?: Discovered;
    /** The redirect URI this client shape uses (default REDIRECT). */
    redirect?: string;
  } = {},
): Promise<{
  tokens: OAuthTokens;
  client: OAuthClientInformationFull;
  discovered: Discovered;
  browser: Browser;
}> {
  const discovered = opts.discovered ?? (await discover(svc));
  const client = opts.client ?? (await register(discovered));
  const browser = opts.browser ?? new Browser(svc);
  const redirect = opts.redirect ?? REDIRECT;
  const { authorizationUrl, codeVerifier } = await startAuthorization(discovered.issuer, {
    metadata: discovered.metadata,
    clientInformation: client,
    redirectUrl: redirect,
    scope: 'mcp',
    state: 'state-123',
    resource: new URL(discovered.resource),
  });
  const back = await authorizeInBrowser(browser, authorizationUrl.toString(), user);
  const code = back.searchParams.get('code');
  if (!code)
    throw new Error(
      `no code: ${back.searchParams.get('error')} ${back.searchParams.get('error_description')}`,
    );
  const tokens = await exchangeAuthorization(discovered.issuer, {
    metadata: discovered.metadata,
    clientInformation: client,
    authorizationCode: code,
    codeVerifier,
    redirectUri: redirect,
    resource: new URL(discovered.resource),
  });
  return { tokens, client, discovered, browser };
}

/** A form POST to the token endpoint. */
export function tokenRequest(
  svc: TestService,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return svc.fetch('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body),
  });
}

/** A raw tools/list at /mcp with this access token (to read the HTTP status and challenge). */
export function mcpStatusOf(svc: TestService, accessToken: string): Promise<Response> {
  return svc.fetch('/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}
