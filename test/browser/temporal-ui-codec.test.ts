// biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow steps are templates.
// The Temporal UI (the one `temporal server start-dev` serves, as dev mode runs it) in Debian's
// Chromium, pointed at Countersign's codec endpoint with cross-origin credentials: a person signed
// in to Countersign sees the run's payloads decoded, redacted by their own data-protection policy;
// without a session the UI gets 401 from the codec and shows no plaintext. The UI and Countersign
// listen on 127.0.0.1 on different ports: the same site, so the SameSite=Lax session cookie rides
// on the UI's credentialed fetch, and TEMPORAL_UI_URL names the UI origin for CORS.
import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../store/ids.ts';
import { servers } from '../harness/servers.ts';
import {
  type Person,
  type ProtectionWorld,
  SECRET,
  startProtectionWorld,
} from '../workflows/protection-world.ts';
import { runWorkflow, type WorkflowView } from '../workflows/setup.ts';

const SHOTS = new URL('../../test-output/screenshots/', import.meta.url).pathname;
const MARKER = `ui-marker-${newId('run').slice(-8)}`;

let w: ProtectionWorld;
let browser: Browser;
let uiOrigin: string;
let admin: Person;
let member: Person;
let runId: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  uiOrigin = `http://127.0.0.1:${servers().temporal.uiPort}`;
  w = await startProtectionWorld({ env: { TEMPORAL_UI_URL: `${uiOrigin}/` } });
  admin = await w.person('admin', 'tui.admin@example.test');
  member = await w.person('member', 'tui.member@example.test');
  const created = await w.env.api<WorkflowView>('POST', '/api/v1/workflows', {
    name: 'Lookup seen in the Temporal UI',
    inputs: [
      { key: 'who', description: 'Name', type: 'string' },
      { key: 'note', description: 'A note', type: 'string' },
    ],
    steps: [
      {
        name: 'lookup',
        action: {
          __type__: 'query',
          credential_id: w.pg.credentialId,
          query: 'select name, email, ssn, ${note} as note from people where name = ${who}',
        },
      },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  runId = await runWorkflow(w.env, created.body.id, { who: 'Ada', note: MARKER }, admin.bearer);
  const run = await w.env.waitRun(created.body.id, runId);
  expect(run.status, run.error ?? '').toBe('succeeded');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-gpu',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await w?.stop();
});

/**
 * A browser context whose Temporal UI uses the codec endpoint with credentials: the settings of the
 * UI's "Codec Server" dialog, which it keeps in localStorage as JSON (ui-server v2.42, persistStore
 * keys endpoint / includeCredentials / overrideRemoteCodecConfiguration / passAccessToken).
 */
async function browserContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  contexts.push(context);
  await context.addInitScript(
    ([origin, endpoint]) => {
      if (window.location.origin !== origin) return;
      window.localStorage.setItem('endpoint', JSON.stringify(endpoint));
      window.localStorage.setItem('includeCredentials', 'true');
      window.localStorage.setItem('overrideRemoteCodecConfiguration', 'true');
      window.localStorage.setItem('passAccessToken', 'false');
    },
    [uiOrigin, `${w.env.svc.url}/temporal/codec`] as const,
  );
  return context;
}

async function signIn(context: BrowserContext, person: Person): Promise<void> {
  const page = await context.newPage();
  await page.goto(`${w.env.svc.url}/login`);
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => u.pathname !== '/login');
  await page.close();
}

interface Opened {
  page: Page;
  /** Status of every call the UI made to the codec's decode. */
  decodes: number[];
}

/** Opens the run's page in the Temporal UI and waits until the UI has asked the codec to decode. */
async function openRun(context: BrowserContext): Promise<Opened> {
  const page = await context.newPage();
  const decodes: number[] = [];
  page.on('response', (res) => {
    if (new URL(res.url()).pathname === '/temporal/codec/decode' && res.request().method() === 'POST')
      decodes.push(res.status());
  });
  const ns = w.env.svc.deps.config.temporalNamespace;
  await page.goto(`${uiOrigin}/namespaces/${ns}/workflows/${runId}`);
  await expect.poll(() => decodes.length, { timeout: 30_000 }).toBeGreaterThan(0);
  return { page, decodes };
}

// What the page renders for a person to read, not the text of hidden nodes.
// biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point here.
const text = (page: Page) => page.locator('body').innerText();

describe('the Temporal UI with the codec endpoint', () => {
  it('shows an admin the decoded run', async () => {
    const context = await browserContext();
    await signIn(context, admin);
    const { page, decodes } = await openRun(context);
    await expect.poll(() => text(page), { timeout: 30_000 }).toContain(SECRET.ssn);
    expect(await text(page)).toContain(MARKER);
    expect(decodes.every((s) => s === 200)).toBe(true);
    await page.screenshot({ path: `${SHOTS}temporal-ui-admin.png`, fullPage: true });
  });

  it('shows a member under a policy the run decoded and redacted, never the protected values', async () => {
    const context = await browserContext();
    await signIn(context, member);
    const { page, decodes } = await openRun(context);
    await expect.poll(() => text(page), { timeout: 30_000 }).toContain('values hidden');
    await page.screenshot({ path: `${SHOTS}temporal-ui-member.png`, fullPage: true });
    // Neither rendered nor anywhere in the document (collapsed or hidden nodes included).
    const html = await page.content();
    for (const secret of [SECRET.ssn, SECRET.email, MARKER]) expect(html).not.toContain(secret);
    expect(decodes.every((s) => s === 200)).toBe(true);
  });

  it('shows no plaintext to a browser not signed in to Countersign', async () => {
    const context = await browserContext();
    const { page, decodes } = await openRun(context);
    expect(decodes.every((s) => s === 401)).toBe(true);
    // Let the page settle on what it shows for payloads the codec would not decode.
    await page.waitForLoadState('networkidle');
    await expect(page.getByText('Codec Server could not connect').count()).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}temporal-ui-signed-out.png`, fullPage: true });
    const shown = await page.content();
    for (const secret of [SECRET.ssn, SECRET.email, MARKER, 'values hidden'])
      expect(shown).not.toContain(secret);
  });
});
