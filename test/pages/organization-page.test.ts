// API keys, agents and single sign-on are set up in the web UI; secrets are shown once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
});
afterAll(async () => svc?.stop());

const post = (path: string, fields: Record<string, string>) =>
  svc.fetch(path, {
    method: 'POST',
    headers: { cookie: admin.cookie },
    body: new URLSearchParams({ _csrf: admin.csrf, ...fields }),
    redirect: 'manual',
  });

describe('the Organization page', () => {
  it('creates an API key shown once that works, and revokes it', async () => {
    const res = await post('/organization/api-keys', { name: 'deploy pipeline' });
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const key = /(cskey_[0-9A-Z]{26}_[A-Za-z0-9_-]{43})/.exec(html)![1]!;
    expect((await svc.fetch('/api/v1/me', { headers: { 'x-api-key': key } })).status).toBe(200);
    const page = await (await svc.fetch('/organization', { headers: { cookie: admin.cookie } })).text();
    expect(page).toContain('deploy pipeline');
    expect(page).not.toContain(key);
    const id = /action="\/organization\/api-keys\/(key_\w+)\/revoke"/.exec(
      page.slice(page.indexOf('<strong>deploy pipeline</strong>')),
    )![1]!;
    const ask = await post(`/organization/api-keys/${id}/revoke`, {});
    expect(await ask.text()).toContain('Revoke the API key deploy pipeline?');
    expect((await svc.fetch('/api/v1/me', { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await post(`/organization/api-keys/${id}/revoke`, { _confirmed: 'yes' })).status).toBe(303);
    expect((await svc.fetch('/api/v1/me', { headers: { 'x-api-key': key } })).status).toBe(401);
  });

  it('registers an agent, shows its token once and its status', async () => {
    const html = await (await post('/organization/agents', { name: 'office-network' })).text();
    expect(html).toMatch(/agt_|csagt_|[A-Za-z]+_[0-9A-Z]{26}_[A-Za-z0-9_-]{43}/);
    expect(html).toContain('not connected');
    expect(html).toContain('countersign agent --server');
  });

  it('saves single sign-on, never shows the secret back, keeps it when left empty, and validates', async () => {
    const current_password = svc.admin.password;
    const bad = await post('/organization/sso', {
      issuer: 'not a url',
      client_id: 'x',
      client_secret: 's',
      current_password,
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('must be the issuer URL');
    const ok = await post('/organization/sso', {
      issuer: 'https://login.example.test',
      client_id: 'countersign',
      client_secret: 'very secret value',
      provision_role: 'member',
      enabled: 'on',
      current_password,
    });
    expect(ok.status).toBe(303);
    const [row] = await svc.deps.sql<
      { client_secret_enc: string; provision_role: string }[]
    >`select * from sso_configs`;
    expect(row!.provision_role).toBe('member');
    const page = await (await svc.fetch('/organization', { headers: { cookie: admin.cookie } })).text();
    expect(page).toContain('https://login.example.test');
    expect(page).not.toContain('very secret value');
    await post('/organization/sso', {
      issuer: 'https://login.example.test',
      client_id: 'countersign',
      client_secret: '',
      provision_role: '',
      current_password,
    });
    const [kept] = await svc.deps.sql<
      { client_secret_enc: string; provision_role: string | null }[]
    >`select * from sso_configs`;
    expect(kept!.client_secret_enc).toBe(row!.client_secret_enc);
    expect(kept!.provision_role).toBeNull();
  });

  it('lists a connected AI client and disables it from the page', async () => {
    const { client } = await connect(svc, svc.admin);
    const page = await (await svc.fetch('/organization', { headers: { cookie: admin.cookie } })).text();
    expect(page).toContain('Test AI client');
    const res = await post('/organization/ai-clients', { client_id: client.client_id, disabled: 'on' });
    expect(res.status).toBe(303);
    const [row] = await svc.deps.sql<{ disabled: boolean }[]>`
      select disabled from ai_client_controls where client_id = ${client.client_id}`;
    expect(row!.disabled).toBe(true);
  });

  it('is for admins only', async () => {
    const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
    await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: 'org-member@example.test',
      role: 'member',
      password: 'member password 123',
    });
    const m = await signIn(svc, 'org-member@example.test', 'member password 123');
    expect((await svc.fetch('/organization', { headers: { cookie: m.cookie } })).status).toBe(403);
  });
});
