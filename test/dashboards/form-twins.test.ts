// biome-ignore-all lint/suspicious/noTemplateCurlyInString: panel queries are templates.
// The dashboard page's panel form and row-action form share their schemas with
// POST /v1/dashboards/:id/panels/:panelId/run and …/actions/:actionId/run (dashboards/schema.ts),
// checked by runPanel and runAction: the same invalid input gets the same field errors through
// either door, and runs nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../helpers/service.ts';
import { type DashboardWorld, startDashboardWorld } from './fixture.ts';

let w: DashboardWorld;
let page: { cookie: string; csrf: string };
let base: string;
let rest: string;
let actionId: string;

beforeAll(async () => {
  w = await startDashboardWorld();
  page = await signIn(w.env.svc, w.admin.email, w.admin.password);
  const created = await w.call<{ id: string; panels: Array<{ id: string; actions: Array<{ id: string }> }> }>(
    'POST',
    '/v1/dashboards',
    {
      name: 'Twins',
      restricted_access: false,
      panels: [
        {
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
          ],
          details: {
            __type__: 'query',
            query: 'select id, name from customers where id >= ${min_id}::int order by id',
            credential_id: w.credentials.open,
          },
        },
      ],
    },
    w.admin,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const panel = created.body.panels[0]!;
  actionId = panel.actions[0]!.id;
  base = `/dashboards/${created.body.id}/panels/${panel.id}`;
  rest = `/v1/dashboards/${created.body.id}/panels/${panel.id}`;
});
afterAll(async () => w?.stop());

/** The REST answer: a 422 naming fields; its detail is what the page must say. */
async function restDetail(path: string, body: unknown): Promise<string> {
  const res = await w.call<{ detail: string; errors?: { path: string }[] }>('POST', path, body, w.admin);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.errors?.length).toBeGreaterThan(0);
  return res.body.detail;
}

/** The page's answer to the same input as its form: a redirect carrying the error flash. */
async function formFlash(path: string, fields: Record<string, string>): Promise<string> {
  const res = await w.env.svc.fetch(path, {
    method: 'POST',
    headers: { cookie: page.cookie },
    body: new URLSearchParams({ _csrf: page.csrf, ...fields }),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location') ?? '', 'http://page.invalid').searchParams.get('error') ?? '';
}

describe('the panel form and POST /v1/dashboards/:id/panels/:panelId/run', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'a missing input', json: { inputs: {} }, form: {} },
    {
      name: 'an input value too long',
      json: { inputs: { min_id: '1'.repeat(10_001) } },
      form: { 'in.min_id': '1'.repeat(10_001) },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      expect(await formFlash(`${base}/submit`, c.form)).toBe(await restDetail(`${rest}/run`, c.json));
    });
});

describe('the row-action form and POST /v1/dashboards/:id/panels/:panelId/actions/:actionId/run', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'a row without a mapped column', json: { row: { id: '1' } }, form: { 'row.id': '1' } },
    {
      name: 'a cell that is not the input type',
      json: { row: { id: 'one', name: 'Ada' } },
      form: { 'row.id': 'one', 'row.name': 'Ada' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      expect(await formFlash(`${base}/actions/${actionId}`, c.form)).toBe(
        await restDetail(`${rest}/actions/${actionId}/run`, c.json),
      );
    });

  it('ran nothing: no query entry of the panel, no run of the workflow', async () => {
    const runs = await w.env.svc.deps
      .sql`select 1 from workflow_runs where workflow_id = ${w.refundWorkflowId}`;
    expect(runs.length).toBe(0);
    const queries = await w.env.svc.deps.sql`select 1 from audit_log where origin = 'dashboard'`;
    expect(queries.length).toBe(0);
  });
});
