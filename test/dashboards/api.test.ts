// biome-ignore-all lint/suspicious/noTemplateCurlyInString: panel queries are templates.
// /v1/dashboards (SPEC.md 2.3, 4.3) against a real service, PostgreSQL and Temporal: every
// endpoint and its errors, restricted access, governed panel queries, and row actions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { signIn } from '../helpers/service.ts';
import { CUSTOMERS, type DashboardWorld, startDashboardWorld } from './fixture.ts';

let w: DashboardWorld;
beforeAll(async () => {
  w = await startDashboardWorld();
});
afterAll(async () => w?.stop());

interface Dashboard {
  id: string;
  name: string;
  restricted_access: boolean;
  archived_at: string | null;
  panels: Array<{
    id: string;
    title: string;
    inputs: Array<{ key: string; description: string }>;
    actions: Array<{
      id: string;
      label: string | null;
      workflow_id: string | null;
      input_mappings: unknown[];
    }>;
    details: { __type__: string; query: string; credential_id: string };
  }>;
  inserted_at: string;
  updated_at: string;
}
type Problem = { detail: string; errors?: Array<{ path: string; message: string }> };

const customersPanel = () => ({
  title: 'Customers',
  inputs: [{ key: 'min_id', description: 'Smallest id' }],
  actions: [
    {
      label: 'Refund',
      workflow_id: w.refundWorkflowId,
      input_mappings: [
        { workflow_input_key: 'customer_id', column: 'id' },
        { workflow_input_key: 'note', column: 'name' },
      ],
    },
    { label: null, workflow_id: null },
  ],
  details: {
    __type__: 'query',
    query: 'select id, name, email from customers where id >= ${min_id}::int order by id',
    credential_id: w.credentials.open,
  },
});

async function create(body: Record<string, unknown>, as = w.admin) {
  const res = await w.call<Dashboard>('POST', '/v1/dashboards', body, as);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('dashboards: happy path', () => {
  it('creates with generated pl_ and act_ ids, reads, lists, replaces keeping ids, archives, deletes', async () => {
    const d = await create({ name: 'Support', restricted_access: false, panels: [customersPanel()] });
    expect(d.id).toMatch(/^dash_[0-9A-Z]{26}$/);
    expect(d.panels[0]!.id).toMatch(/^pl_[0-9A-Z]{26}$/);
    expect(d.panels[0]!.actions.map((a) => a.id)).toEqual([
      expect.stringMatching(/^act_[0-9A-Z]{26}$/),
      expect.stringMatching(/^act_[0-9A-Z]{26}$/),
    ]);
    expect(d).toMatchObject({ name: 'Support', restricted_access: false, archived_at: null });

    const got = await w.call<Dashboard>('GET', `/v1/dashboards/${d.id}`, undefined, w.member);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(d);

    const list = await w.call<{ data: Dashboard[] }>('GET', '/v1/dashboards', undefined, w.member);
    expect(list.body.data.map((x) => x.id)).toContain(d.id);

    const panels = d.panels.map((p) => ({ ...p, title: 'Customers (all)' }));
    const put = await w.call<Dashboard>(
      'PUT',
      `/v1/dashboards/${d.id}`,
      { name: 'Support desk', panels },
      w.admin,
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.name).toBe('Support desk');
    expect(put.body.panels[0]!.id).toBe(d.panels[0]!.id);
    expect(put.body.panels[0]!.actions[0]!.id).toBe(d.panels[0]!.actions[0]!.id);
    expect(put.body.panels[0]!.title).toBe('Customers (all)');

    // An id the client makes up is replaced: ids are the service's.
    const forged = await w.call<Dashboard>(
      'PUT',
      `/v1/dashboards/${d.id}`,
      { panels: [{ ...customersPanel(), id: 'pl_01ARZ3NDEKTSV4RRFFQ69G5FAV' }] },
      w.admin,
    );
    expect(forged.body.panels[0]!.id).not.toBe('pl_01ARZ3NDEKTSV4RRFFQ69G5FAV');

    const archived = await w.call<Dashboard>('POST', `/v1/dashboards/${d.id}/archive`, undefined, w.admin);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    const hidden = await w.call<{ data: Dashboard[] }>('GET', '/v1/dashboards', undefined, w.admin);
    expect(hidden.body.data.map((x) => x.id)).not.toContain(d.id);
    const all = await w.call<{ data: Dashboard[] }>(
      'GET',
      '/v1/dashboards?include_archived=true',
      undefined,
      w.admin,
    );
    expect(all.body.data.map((x) => x.id)).toContain(d.id);
    const restored = await w.call<Dashboard>('POST', `/v1/dashboards/${d.id}/unarchive`, undefined, w.admin);
    expect(restored.body.archived_at).toBeNull();

    const del = await w.call<Dashboard>('DELETE', `/v1/dashboards/${d.id}`, undefined, w.admin);
    expect(del.status).toBe(200);
    expect(del.body.id).toBe(d.id);
    expect((await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.admin)).status).toBe(404);
    expect((await w.call('DELETE', `/v1/dashboards/${d.id}`, undefined, w.admin)).status).toBe(404);
  });
});

describe('dashboards: errors', () => {
  const expect422 = async (
    body: unknown,
    path: string,
    message: RegExp,
    method = 'POST',
    url = '/v1/dashboards',
  ) => {
    const res = await w.call<Problem>(method, url, body, w.admin);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([{ path, message: expect.stringMatching(message) }]),
    );
  };

  it('requires name and restricted_access', async () => {
    await expect422({ restricted_access: false }, 'name', /./);
    await expect422({ name: 'x' }, 'restricted_access', /restricted_access/);
    await expect422({ name: 'x', restricted_access: 'yes' }, 'restricted_access', /true or false/);
    await expect422({ name: '  ', restricted_access: false }, 'name', /required/);
  });

  it('refuses panels that are not query panels, unknown credentials and undeclared inputs', async () => {
    const p = customersPanel();
    await expect422(
      {
        name: 'x',
        restricted_access: false,
        panels: [{ ...p, details: { ...p.details, __type__: 'chart' } }],
      },
      'panels.0.details.__type__',
      /query/,
    );
    await expect422(
      {
        name: 'x',
        restricted_access: false,
        panels: [{ ...p, details: { ...p.details, credential_id: 'crd_01ARZ3NDEKTSV4RRFFQ69G5FAV' } }],
      },
      'panels.0.details.credential_id',
      /no such credential/,
    );
    await expect422(
      { name: 'x', restricted_access: false, panels: [{ ...p, inputs: [] }] },
      'panels.0.details.query',
      /undeclared input.*min_id/,
    );
    await expect422(
      { name: 'x', restricted_access: false, panels: [{ ...p, colour: 'red' }] },
      'panels.0.colour',
      /./,
    );
  });

  it('refuses a mapping to a missing column or workflow input, and an unknown workflow (422 on save)', async () => {
    const p = customersPanel();
    const withMapping = (
      m: { workflow_input_key: string; column: string },
      workflowId = w.refundWorkflowId,
    ) => ({
      name: 'x',
      restricted_access: false,
      panels: [{ ...p, actions: [{ label: 'Go', workflow_id: workflowId, input_mappings: [m] }] }],
    });
    await expect422(
      withMapping({ workflow_input_key: 'customer_id', column: 'phone' }),
      'panels.0.actions.0.input_mappings.0.column',
      /no column phone/,
    );
    await expect422(
      withMapping({ workflow_input_key: 'amount', column: 'id' }),
      'panels.0.actions.0.input_mappings.0.workflow_input_key',
      /no input amount/,
    );
    await expect422(
      withMapping({ workflow_input_key: 'customer_id', column: 'id' }, 'wf_01ARZ3NDEKTSV4RRFFQ69G5FAV'),
      'panels.0.actions.0.workflow_id',
      /no such workflow/,
    );
    // On PUT too, and nothing is changed.
    const d = await create({ name: 'Kept', restricted_access: false, panels: [p] });
    await expect422(
      withMapping({ workflow_input_key: 'customer_id', column: 'phone' }),
      'panels.0.actions.0.input_mappings.0.column',
      /no column/,
      'PUT',
      `/v1/dashboards/${d.id}`,
    );
    const after = await w.call<Dashboard>('GET', `/v1/dashboards/${d.id}`, undefined, w.admin);
    expect(after.body.name).toBe('Kept');
  });

  it('answers 400 for a body that is not JSON and 404 for unknown ids', async () => {
    const res = await w.env.svc.fetch('/v1/dashboards', {
      method: 'POST',
      headers: { ...w.admin.bearer, 'content-type': 'application/json' },
      body: '{',
    });
    expect(res.status).toBe(400);
    expect(
      (await w.call('GET', '/v1/dashboards/dash_01ARZ3NDEKTSV4RRFFQ69G5FAV', undefined, w.admin)).status,
    ).toBe(404);
    const d = await create({ name: 'y', restricted_access: false, panels: [customersPanel()] });
    expect(
      (await w.call('POST', `/v1/dashboards/${d.id}/panels/pl_nope/run`, { inputs: {} }, w.admin)).status,
    ).toBe(404);
    const run = await w.call<Problem>(
      'POST',
      `/v1/dashboards/${d.id}/panels/${d.panels[0]!.id}/run`,
      { inputs: {} },
      w.admin,
    );
    expect(run.status).toBe(422);
    expect(run.body.errors).toEqual([{ path: 'inputs.min_id', message: 'a value is required' }]);
  });
});

describe('dashboards: security', () => {
  it('needs a personal access token: no credentials, a wrong token and an API key are 401', async () => {
    expect((await w.env.svc.fetch('/v1/dashboards')).status).toBe(401);
    const wrong = await w.env.svc.fetch('/v1/dashboards', {
      headers: { authorization: 'Bearer cspat_nope' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const key = await w.env.svc.fetch('/v1/dashboards', { headers: { 'x-api-key': w.env.svc.apiKey } });
    expect(key.status).toBe(401);
  });

  it('lets only the creator or an admin change a dashboard', async () => {
    const d = await create({ name: 'Admin owned', restricted_access: false });
    const put = await w.call<Problem>('PUT', `/v1/dashboards/${d.id}`, { name: 'mine now' }, w.member);
    expect(put.status).toBe(403);
    expect((await w.call('DELETE', `/v1/dashboards/${d.id}`, undefined, w.member)).status).toBe(403);
    expect((await w.call('POST', `/v1/dashboards/${d.id}/archive`, undefined, w.member)).status).toBe(403);
    const own = await create({ name: 'Member owned', restricted_access: false }, w.member);
    expect((await w.call('PUT', `/v1/dashboards/${own.id}`, { name: 'renamed' }, w.member)).status).toBe(200);
  });

  it('shows a restricted dashboard only to its creator, super admins and granted users', async () => {
    const d = await create({ name: 'Secret', restricted_access: true });
    expect((await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.member)).status).toBe(404);
    expect((await w.call('PUT', `/v1/dashboards/${d.id}`, { name: 'x' }, w.member)).status).toBe(404);
    const list = await w.call<{ data: Dashboard[] }>('GET', '/v1/dashboards', undefined, w.member);
    expect(list.body.data.map((x) => x.id)).not.toContain(d.id);
    expect((await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.superAdmin)).status).toBe(200);

    const granted = await w.call<{ data: Array<{ user_id: string }> }>(
      'POST',
      `/v1/dashboards/${d.id}/grants`,
      { user_id: w.member.userId },
      w.admin,
    );
    expect(granted.status).toBe(200);
    expect(granted.body.data.map((g) => g.user_id)).toEqual([w.member.userId]);
    expect((await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.member)).status).toBe(200);
    // A grant lets the member see it, not manage who else may.
    expect((await w.call('GET', `/v1/dashboards/${d.id}/grants`, undefined, w.member)).status).toBe(403);
    const bad = await w.call<Problem>(
      'POST',
      `/v1/dashboards/${d.id}/grants`,
      { user_id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
      w.admin,
    );
    expect(bad.status).toBe(422);

    expect(
      (await w.call('DELETE', `/v1/dashboards/${d.id}/grants/${w.member.userId}`, undefined, w.admin)).status,
    ).toBe(204);
    expect((await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.member)).status).toBe(404);
    expect(
      (await w.call('DELETE', `/v1/dashboards/${d.id}/grants/${w.member.userId}`, undefined, w.admin)).status,
    ).toBe(404);
  });

  it('shares a restricted dashboard with a role: its holders see it, other roles do not', async () => {
    const d = await create({ name: 'For a role', restricted_access: true });
    const seen = async () => {
      const list = await w.call<{ data: Dashboard[] }>('GET', '/v1/dashboards', undefined, w.member);
      const one = await w.call('GET', `/v1/dashboards/${d.id}`, undefined, w.member);
      return { listed: list.body.data.some((x) => x.id === d.id), status: one.status };
    };
    const share = (role: string) =>
      w.call<{ data: Array<{ role: string }> }>(
        'POST',
        `/v1/dashboards/${d.id}/role-grants`,
        { role },
        w.admin,
      );
    // Shared with admins only: a member still gets a 404 and no list entry.
    expect((await share('admin')).status).toBe(201);
    expect(await seen()).toEqual({ listed: false, status: 404 });
    const both = await share('member');
    expect(both.body.data.map((g) => g.role)).toEqual(['admin', 'member']);
    expect(await seen()).toEqual({ listed: true, status: 200 });
    // Seeing it is not managing it.
    expect(
      (await w.call('POST', `/v1/dashboards/${d.id}/role-grants`, { role: 'member' }, w.member)).status,
    ).toBe(403);
    const bad = await w.call<Problem>(
      'POST',
      `/v1/dashboards/${d.id}/role-grants`,
      { role: 'super_admin' },
      w.admin,
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors?.map((e) => e.path)).toEqual(['role']);

    expect(
      (await w.call('DELETE', `/v1/dashboards/${d.id}/role-grants/member`, undefined, w.admin)).status,
    ).toBe(204);
    expect(await seen()).toEqual({ listed: false, status: 404 });
    expect(
      (await w.call('DELETE', `/v1/dashboards/${d.id}/role-grants/member`, undefined, w.admin)).status,
    ).toBe(404);
  });

  it("keeps a panel's chart view, and names a view that is not one of table, line, bar", async () => {
    const panel = { ...customersPanel(), details: { ...customersPanel().details, view: 'bar' } };
    const d = await create({ name: 'Chart', restricted_access: false, panels: [panel] });
    expect((d.panels[0]!.details as Record<string, unknown>).view).toBe('bar');
    const bad = await w.call<Problem>(
      'POST',
      '/v1/dashboards',
      {
        name: 'Pie',
        restricted_access: false,
        panels: [{ ...panel, details: { ...panel.details, view: 'pie' } }],
      },
      w.admin,
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors?.map((e) => e.path)).toEqual(['panels.0.details.view']);
  });
});

describe('panels run through the governed pipeline as the viewer', () => {
  let d: Dashboard;
  beforeAll(async () => {
    d = await create({
      name: 'Governed',
      restricted_access: false,
      panels: [
        customersPanel(),
        {
          title: 'Reviewed',
          inputs: [],
          details: {
            __type__: 'query',
            query: 'select id, name from customers order by id',
            credential_id: w.credentials.reviewed,
          },
        },
        {
          title: 'Echo',
          inputs: [{ key: 'text', description: 'Any text' }],
          details: {
            __type__: 'query',
            query: 'select ${text}::text as echo',
            credential_id: w.credentials.open,
          },
        },
      ],
    });
  });
  const runPanel = (i: number, inputs: Record<string, string>, as = w.member) =>
    w.call<{
      status: string;
      request_id: string | null;
      result: { columns: string[]; rows: unknown[][] } | null;
    }>('POST', `/v1/dashboards/${d.id}/panels/${d.panels[i]!.id}/run`, { inputs }, as);

  it('keeps a redacted column redacted for a member under the policy, and shows it to an admin', async () => {
    const member = await runPanel(0, { min_id: '1' });
    expect(member.status, JSON.stringify(member.body)).toBe(200);
    expect(member.body.result!.columns).toEqual(['id', 'name', 'email']);
    expect(member.body.result!.rows).toEqual(CUSTOMERS.map((c) => [c.id, c.name, '****']));
    expect(JSON.stringify(member.body)).not.toContain('private@example.com');
    const admin = await runPanel(0, { min_id: '2' }, w.admin);
    expect(admin.body.result!.rows).toEqual([[2, 'Grace', 'grace.private@example.com']]);
  });

  it('binds inputs as parameters, never as SQL text', async () => {
    const hostile = "x'::text; drop table customers; --";
    const res = await runPanel(2, { text: hostile });
    expect(res.body.result!.rows).toEqual([[hostile]]);
    expect((await runPanel(0, { min_id: '1' })).body.result!.rows).toHaveLength(2);
  });

  it('shows the pending state on a credential that needs a review, without opening a second request', async () => {
    const first = await runPanel(1, {});
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      status: 'pending_review',
      request_id: expect.stringMatching(/^qr_/),
      result: null,
    });
    const again = await runPanel(1, {});
    expect(again.body.request_id).toBe(first.body.request_id);
    const request = await w.call<{ status: string; origin: string }>(
      'GET',
      `/api/v1/desk/query-requests/${first.body.request_id}`,
      undefined,
      w.member,
    );
    expect(request.body).toMatchObject({ status: 'pending', origin: 'dashboard' });
  });

  it('audits panel queries with origin dashboard and the viewer as actor', async () => {
    const res = await w.call<{
      data: Array<{ origin: string; actor: { user_id: string }; outcome: string }>;
    }>('GET', `/api/v1/audit?origin=dashboard&actor=${w.member.userId}`);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThanOrEqual(3);
    expect(res.body.data.every((e) => e.origin === 'dashboard' && e.actor.user_id === w.member.userId)).toBe(
      true,
    );
  });
});

describe('row actions', () => {
  it('start the workflow with the row values mapped to its inputs', async () => {
    const d = await create({ name: 'Actions', restricted_access: false, panels: [customersPanel()] });
    const [panel] = d.panels;
    const action = panel!.actions[0]!;
    const res = await w.call<{ run_id: string; workflow_id: string; url: string }>(
      'POST',
      `/v1/dashboards/${d.id}/panels/${panel!.id}/actions/${action.id}/run`,
      { row: { id: 2, name: 'Grace', email: '****' } },
      w.member,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.workflow_id).toBe(w.refundWorkflowId);
    const run = await w.env.waitRun(w.refundWorkflowId, res.body.run_id);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.inputs).toEqual({ customer_id: 2, note: 'Grace' });
    expect(run.trigger).toBe('manual');
    expect(run.steps![0]!.output).toMatchObject({ rows: [[2, 'Grace']] });
    // One start on the audit log, by the member from this dashboard, with input keys only.
    const started = await w.env.svc.deps.sql<{ actor_user_id: string; origin: string; subject: object }[]>`
      select actor_user_id, origin, subject from audit_log
      where event = 'run.started' and subject->>'run_id' = ${res.body.run_id}`;
    expect(started).toEqual([
      {
        actor_user_id: w.member.userId,
        origin: 'dashboard',
        subject: expect.objectContaining({ dashboard_id: d.id, input_keys: ['customer_id', 'note'] }),
      },
    ]);
    expect(JSON.stringify(started)).not.toContain('Grace');

    // Text cells (as a web form posts them) are read by the input's type.
    const text = await w.call<{ run_id: string }>(
      'POST',
      `/v1/dashboards/${d.id}/panels/${panel!.id}/actions/${action.id}/run`,
      { row: { id: '1', name: 'Ada' } },
      w.member,
    );
    expect((await w.env.waitRun(w.refundWorkflowId, text.body.run_id)).inputs).toEqual({
      customer_id: 1,
      note: 'Ada',
    });
  });

  it('refuse a row without the mapped column, a bad value and an action without a workflow', async () => {
    const d = await create({ name: 'Actions 2', restricted_access: false, panels: [customersPanel()] });
    const [panel] = d.panels;
    const url = (a: number) =>
      `/v1/dashboards/${d.id}/panels/${panel!.id}/actions/${panel!.actions[a]!.id}/run`;
    const missing = await w.call<Problem>('POST', url(0), { row: { id: 1 } }, w.member);
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: 'row.name', message: 'the row has no such column' }]);
    const bad = await w.call<Problem>('POST', url(0), { row: { id: 'one', name: 'x' } }, w.member);
    expect(bad.status).toBe(422);
    expect(bad.body.errors![0]!.path).toBe('row.id');
    const none = await w.call<Problem>('POST', url(1), { row: {} }, w.member);
    expect(none.status).toBe(422);
  });
});

describe('the dashboard page', () => {
  it("says a panel's database is not open to the viewer, instead of calling it missing", async () => {
    // A database restricted to its registrant; its panel on a dashboard shared with everyone.
    const pg = servers().postgres;
    const hidden = await w.call<{ id: string; credentials: Array<{ id: string }> }>(
      'POST',
      '/api/v1/desk/databases',
      {
        name: 'Finance',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        restrict_access: true,
        credentials: [
          { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        ],
      },
      w.superAdmin,
    );
    expect(hidden.status).toBe(201);
    const made = await w.call<Dashboard>(
      'POST',
      '/v1/dashboards',
      {
        name: 'Everyone sees this',
        restricted_access: false,
        panels: [
          {
            title: 'Ledger',
            inputs: [],
            actions: [],
            details: {
              __type__: 'query',
              query: 'select 1 as n',
              credential_id: hidden.body.credentials[0]!.id,
            },
          },
        ],
      },
      w.superAdmin,
    );
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const session = await signIn(w.env.svc, w.member.email, w.member.password);
    const page = await (
      await w.env.svc.fetch(`/dashboards/${made.body.id}`, { headers: { cookie: session.cookie } })
    ).text();
    expect(page).toContain('This panel&#39;s database or credential is not open to you');
    expect(page).not.toContain('no such database');
    // Its owner sees the panel's rows.
    const own = await signIn(w.env.svc, w.superAdmin.email, w.superAdmin.password);
    const mine = await (
      await w.env.svc.fetch(`/dashboards/${made.body.id}`, { headers: { cookie: own.cookie } })
    ).text();
    expect(mine).not.toContain('is not open to you');
  });
});
