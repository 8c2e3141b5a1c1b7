// "Connect an AI client", in Debian's Chromium: a person follows the page from the navigation,
// copies the settings, and the tests' MCP SDK client connects with them; the connect doctor walks
// the discovery a client does and reports every step, red with the reason for a database where
// AI is off. The Organization page's client limits explain themselves. Laptop and phone sizes.
import { mkdir } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { registerDatabase } from '../mcp/target.ts';
import { connect } from '../oauth/flow.ts';

const SHOTS = '/work/notes/shots/workspace/';
let svc: TestService;
let browser: Browser;
const member = { email: 'ai-user@example.test', password: 'ai user password 1' };

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  svc = await startTestService();
  await registerDatabase(svc, { name: 'orders', ai_enabled: true });
  await registerDatabase(svc, { name: 'payroll', ai_enabled: false });
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: member.email,
    role: 'member',
    password: member.password,
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function signIn(who: { email: string; password: string }, viewport: { width: number; height: number }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${svc.url}/login`);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
  return page;
}

describe('connect an AI client', () => {
  it('gives settings an MCP client connects with, and a doctor that reports each step', async () => {
    const page = await signIn(member, { width: 1366, height: 900 });
    await Promise.all([page.waitForURL(/\/settings\/ai$/), page.click('nav >> text=Connect AI')]);
    const url = await page.inputValue('#mcp-url');
    expect(url).toBe(`${svc.url}/mcp`);
    // Every client's settings name the same URL.
    for (const id of ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'chatgpt'])
      expect(await page.locator(`#config-${id}`).textContent()).toContain(url);
    await page.click('#client-cursor summary');
    const copied = JSON.parse((await page.locator('#config-cursor').textContent())!) as {
      mcpServers: { countersign: { url: string } };
    };

    // Why not payroll: AI is off there; orders is reachable.
    expect(await page.locator('#reach-ok').textContent()).toContain('orders');
    expect(await page.locator('#reach-blocked').textContent()).toContain('payroll: AI access is off');

    await page.click('#doctor-run');
    const steps = page.locator('#doctor-steps li');
    await expect.poll(() => steps.count()).toBe(7);
    const texts = await steps.allTextContents();
    const oks = await steps.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.ok));
    expect(oks.slice(0, 5)).toEqual(['true', 'true', 'true', 'true', 'true']);
    expect(texts[4]).toContain('Token endpoint reachable');
    const orders = texts.findIndex((t) => t.includes('orders'));
    const payroll = texts.findIndex((t) => t.includes('payroll'));
    expect(oks[orders]).toBe('true');
    expect(oks[payroll]).toBe('false');
    expect(texts[payroll]).toContain('AI access is off for this database');
    await page.screenshot({ path: `${SHOTS}ai-connect-laptop.png`, fullPage: true });
    await page.context().close();

    // The tests' MCP SDK client, pointed at the copied URL, signs in and sees what the page said.
    const { tokens } = await connect(svc, member);
    const client = new Client({ name: 'copied-settings', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(copied.mcpServers.countersign.url), {
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    const listed = (await client.callTool({ name: 'list_databases', arguments: {} })) as {
      structuredContent?: { databases: Array<{ name: string }> };
      content: Array<{ text?: string }>;
    };
    const names = (
      listed.structuredContent?.databases ??
      (JSON.parse(listed.content[0]!.text!) as { databases: Array<{ name: string }> }).databases
    ).map((d) => d.name);
    expect(names).toEqual(['orders']);
    await client.close();
  });

  it('reads on a phone, and the Organization page explains the client limits', async () => {
    const page = await signIn(member, { width: 390, height: 844 });
    await page.goto(`${svc.url}/settings/ai`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}ai-connect-phone.png`, fullPage: true });
    await page.context().close();

    // Once the member's client connected (above), an admin sees it with every database to choose
    // from, AI-off ones marked, and words saying what selecting none means.
    const admin = await signIn(svc.admin, { width: 1366, height: 900 });
    await admin.goto(`${svc.url}/organization#ai-clients`);
    const box = admin.locator('form[action="/organization/ai-clients"]').first();
    expect(await box.locator('option').allTextContents()).toEqual(['orders', 'payroll (AI off)']);
    expect(await box.textContent()).toContain('Select none to let this client reach every database');
    await admin.screenshot({ path: `${SHOTS}organization-ai-clients.png`, fullPage: true });
    await admin.context().close();
  });
});
