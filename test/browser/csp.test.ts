// The strict Content-Security-Policy in Debian's Chromium: every page answers with it, and walking
// every page (signed out, signed in, the OAuth consent to its redirect) raises no violation — the
// pages' scripts and styles are files, with no inline code for the policy to refuse.
import { createServer, type Server } from 'node:http';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardWorld, startDashboardWorld } from '../dashboards/fixture.ts';
import { freePort } from '../helpers/service.ts';

let w: DashboardWorld;
let browser: Browser;
let dashboardId: string;
let callback: Server;
let callbackUrl: string;
const violations: string[] = [];
const documents: Array<{ url: string; status: number; csp: string | null }> = [];

beforeAll(async () => {
  w = await startDashboardWorld();
  const created = await w.call<{ id: string }>(
    'POST',
    '/v1/dashboards',
    {
      name: 'Policy walk',
      restricted_access: false,
      panels: [
        {
          title: 'Customers',
          details: {
            __type__: 'query',
            query: 'select id, name from customers order by id',
            credential_id: w.credentials.open,
          },
        },
      ],
    },
    w.admin,
  );
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  dashboardId = created.body.id;
  // A run waiting for approval: its page reloads itself (assets/live-reload.js).
  const run = await w.env.svc.fetch(`/api/v1/workflows/${w.approvalWorkflowId}/run`, {
    method: 'POST',
    headers: { ...w.member.bearer, 'content-type': 'application/json' },
    body: JSON.stringify({ customer_id: 1, note: 'csp' }),
  });
  if (run.status >= 300) throw new Error(`run answered ${run.status}: ${await run.text()}`);
  // The OAuth client's redirect URI: a local page the consent ends on.
  const port = await freePort();
  callback = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>callback</title><p>back in the client</p>');
  });
  await new Promise<void>((resolve) => callback.listen(port, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${port}/callback`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--no-first-run'],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
  await w?.stop();
});

/** A browser context that records every CSP violation and every document response of ours. */
async function watched(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: w.env.svc.url });
  await context.exposeFunction('__cspViolation', (v: string) => violations.push(v));
  // Init scripts are the browser's own, not the page's: the policy does not apply to them.
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __cspViolation(v: string): void }).__cspViolation(
        `${location.pathname}: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
      );
    });
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
      violations.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => violations.push(`${page.url()}: ${e.message}`));
  page.on('response', async (r) => {
    if (r.request().resourceType() !== 'document' || !r.url().startsWith(w.env.svc.url)) return;
    documents.push({
      url: r.url(),
      status: r.status(),
      csp: (await r.allHeaders())['content-security-policy'] ?? null,
    });
  });
  return { context, page };
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL((u) => u.pathname !== '/login'), page.click('button[type=submit]')]);
}

/** The policy's directives, by name. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!.toLowerCase(), values]),
  );
}

describe('a strict Content-Security-Policy', () => {
  it('signed out: the login, set-password and API reference pages', async () => {
    const { context, page } = await watched();
    for (const path of ['/login', '/set-password?token=nothing', '/docs']) {
      await page.goto(path);
      await page.waitForLoadState('load');
    }
    // The API reference's script (a file now) ran: it listed the operations.
    await page.goto('/docs');
    await page.locator('details').first().waitFor();
    await context.close();
  });

  it('signed in: every section and detail page', async () => {
    const { context, page } = await watched();
    await signIn(page, w.superAdmin.email, w.superAdmin.password);
    const paths = [
      '/',
      '/dashboards',
      `/dashboards/${dashboardId}`,
      '/console',
      '/databases',
      `/databases/${w.databaseId}`,
      `/databases/${w.databaseId}/policies`,
      '/databases/new',
      '/reviews',
      '/workflows',
      `/workflows/${w.approvalWorkflowId}`,
      `/workflows/${w.approvalWorkflowId}/edit`,
      '/workflows/new',
      '/runs',
      '/audit',
      '/people',
      '/organization',
      '/settings',
      '/oauth/connections',
    ];
    for (const path of paths) {
      const res = await page.goto(path);
      expect(res?.status(), path).toBe(200);
      await page.waitForLoadState('load');
    }
    // The stylesheet is a file and it applies.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
      'rgb(247, 248, 250)',
    );
    // The dashboard's result table script (a file now) runs: its CSV button builds a download.
    await page.goto(`/dashboards/${dashboardId}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('button[data-csv]').first().click(),
    ]);
    expect(download.suggestedFilename()).toBe('result.csv');
    // The workflow editor's island runs (its templates are cloned into steps).
    await page.goto(`/workflows/${w.approvalWorkflowId}/edit`);
    await page.locator('.wf-editor .steps > *').first().waitFor();
    // A live run page reloads itself through its script file.
    await page.goto('/runs');
    const href = await page
      .locator('a[href^="/runs/"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')!).find((h) => h.split('/').length === 4));
    expect(href).toBeTruthy();
    await page.goto(href!);
    await page.waitForEvent('load', { timeout: 15_000 });
    await context.close();
  });

  it('the OAuth consent page, and its decision reaching the client', async () => {
    const { context, page } = await watched();
    await signIn(page, w.member.email, w.member.password);
    const reg = await w.env.svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'CSP client',
        redirect_uris: [callbackUrl],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    const client = (await reg.json()) as { client_id: string };
    const authorize = `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: callbackUrl,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'csp',
      scope: 'mcp',
      resource: `${w.env.svc.url}/mcp`,
    })}`;
    await page.goto(authorize);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(callbackUrl)),
      page.click('button[value=approve]'),
    ]);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
    await context.close();
  });

  it('every page answered with the policy, and nothing was refused', () => {
    expect(documents.length).toBeGreaterThan(20);
    for (const d of documents) {
      expect(d.csp, d.url).toBeTruthy();
      const p = directives(d.csp!);
      expect(p.get('script-src'), d.url).toEqual(["'self'"]);
      expect(p.get('object-src'), d.url).toEqual(["'none'"]);
      expect(p.get('base-uri'), d.url).toEqual(["'none'"]);
      expect(p.get('frame-ancestors'), d.url).toEqual(["'none'"]);
      expect(p.get('form-action')?.[0], d.url).toBe("'self'");
      expect(d.csp, d.url).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    }
    expect(violations).toEqual([]);
  });
});
