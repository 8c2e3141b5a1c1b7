// The workflow pages without a browser: who gets the editor, who may start and archive,
// what a form post with bad input changes (nothing), and the island script being served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { startWorkflowEnv, type WorkflowEnv, type WorkflowView } from '../workflows/setup.ts';

let env: WorkflowEnv;
let admin: { cookie: string; csrf: string };
let member: { cookie: string; csrf: string };
let wf: WorkflowView;
let restricted: WorkflowView;

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: false });
  const org = await firstOrganization(env.svc.deps.sql);
  const password = 'workflow pages 1';
  await createUser(env.svc.deps.sql, {
    orgId: org!.id,
    email: 'm@wf.example.test',
    role: 'member',
    password,
  });
  admin = await signIn(env.svc, env.svc.admin.email, env.svc.admin.password);
  member = await signIn(env.svc, 'm@wf.example.test', password);
  const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
    name: 'Typed inputs',
    group: 'Ops',
    inputs: [{ key: 'n', description: 'A number', type: 'integer', default: 3 }],
  });
  const locked = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
    name: 'Admins only',
    run_permissions: [{ role: 'admin' }],
  });
  wf = created.body;
  restricted = locked.body;
});
afterAll(async () => env?.stop());

const get = (who: { cookie: string }, path: string) =>
  env.svc.fetch(path, { headers: { cookie: who.cookie }, redirect: 'manual' });
const post = (who: { cookie: string; csrf: string }, path: string, fields: Record<string, string> = {}) =>
  env.svc.fetch(path, {
    method: 'POST',
    headers: { cookie: who.cookie },
    body: new URLSearchParams({ _csrf: who.csrf, ...fields }),
    redirect: 'manual',
  });

describe('workflow pages', () => {
  it('lists by group what the person may read, and offers "New workflow" to admins only', async () => {
    const forAdmin = await (await get(admin, '/workflows')).text();
    expect(forAdmin).toContain('Typed inputs');
    expect(forAdmin).toContain('>Ops<');
    expect(forAdmin).toContain('href="/workflows/new"');
    const forMember = await (await get(member, '/workflows')).text();
    expect(forMember).toContain('Typed inputs');
    expect(forMember).not.toContain('Admins only');
    expect(forMember).not.toContain('href="/workflows/new"');
  });

  it('sends the signed-out to the login page', async () => {
    const res = await env.svc.fetch('/workflows/new', { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?next=%2Fworkflows%2Fnew');
  });

  it('gives the editor to admins, with the stored definition and the island script', async () => {
    const page = await (await get(admin, `/workflows/${wf.id}/edit`)).text();
    expect(page).toContain('id="wf-initial"');
    expect(page).toContain(`"id":"${wf.id}"`);
    expect(page).toContain('src="/assets/workflow-editor.js"');
    expect((await get(member, `/workflows/${wf.id}/edit`)).status).toBe(403);
    expect((await get(member, '/workflows/new')).status).toBe(403);
    const script = await env.svc.fetch('/assets/workflow-editor.js');
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(await script.text()).toContain('/validate');
  });

  it('hides a workflow from someone who may not read it (404)', async () => {
    expect((await get(member, `/workflows/${restricted.id}`)).status).toBe(404);
  });

  it('refuses a run with a value that is not of the input type, naming the input, and starts nothing', async () => {
    const res = await post(member, `/workflows/${wf.id}/run`, { 'input.n': 'three' });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!, env.svc.url);
    expect(to.pathname).toBe(`/workflows/${wf.id}`);
    expect(to.searchParams.get('error')).toContain('n:');
    const [row] = await env.svc.deps.sql<{ n: number }[]>`select count(*)::int as n from workflow_runs`;
    expect(row!.n).toBe(0);
  });

  it('needs the CSRF token on a form post', async () => {
    const res = await env.svc.fetch(`/workflows/${wf.id}/archive`, {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: 'forged' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect((await env.api<WorkflowView>('GET', `/api/v1/workflows/${wf.id}`)).body.archived_at).toBeNull();
  });

  it('lets admins archive, and not members', async () => {
    expect((await post(member, `/workflows/${wf.id}/archive`)).status).toBe(403);
    expect(await (await post(admin, `/workflows/${wf.id}/archive`)).text()).toContain('No new run can start');
    const res = await post(admin, `/workflows/${wf.id}/archive`, { _confirmed: 'yes' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('/workflows?notice=');
    expect(
      (await env.api<WorkflowView>('GET', `/api/v1/workflows/${wf.id}`)).body.archived_at,
    ).not.toBeNull();
  });
});
