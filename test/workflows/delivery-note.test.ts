// Where a write step cannot run exactly once (no two-phase commit on its database), the workflow
// editor and the run page say so (automation/delivery.ts); where it can (the harness PostgreSQL,
// max_prepared_transactions > 0), they say nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AT_LEAST_ONCE_NOTE } from '../../automation/delivery.ts';
import { servers } from '../harness/servers.ts';
import { signIn } from '../helpers/service.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let env: WorkflowEnv;
let admin: { cookie: string; csrf: string };
let clickhouseCred = '';

beforeAll(async () => {
  env = await startWorkflowEnv();
  admin = await signIn(env.svc, env.svc.admin.email, env.svc.admin.password);
  const ch = servers().clickhouse;
  const res = await env.api<{ credentials: Array<{ id: string }> }>('POST', '/api/v1/desk/databases', {
    name: 'events',
    adapter: 'clickhouse',
    hostname: ch.host,
    port: ch.httpPort,
    database: ch.database,
    credentials: [
      { username: ch.user, password: ch.password, reviews_required: 0, default_credential: true },
    ],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  clickhouseCred = res.body.credentials[0]!.id;
});
afterAll(() => env?.stop());

const page = async (path: string) =>
  (await env.svc.fetch(path, { headers: { cookie: admin.cookie } })).text();
const escaped = (text: string) => text.replaceAll('>', '&gt;');

describe('at-least-once writes are named where they happen', () => {
  it('marks the credential in the editor and the step on the run page', async () => {
    const editor = await page('/workflows/new');
    expect(editor).toContain('events · countersign (writes run at least once)');
    expect(editor).toMatch(/orders · countersign</);

    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Two targets',
      steps: [
        {
          name: 'pg',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select 1 as one' },
        },
        {
          name: 'ch',
          action: { __type__: 'query', credential_id: clickhouseCred, query: 'select 2 as two' },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = await runWorkflow(env, created.body.id);
    const run = await env.waitRun(created.body.id, runId);
    expect(run.status, run.error ?? '').toBe('succeeded');
    const html = await page(`/runs/${created.body.id}/${runId}`);
    const note = escaped(AT_LEAST_ONCE_NOTE);
    // Once: under the ClickHouse step, not under the PostgreSQL one before it.
    expect(html.split(note)).toHaveLength(2);
    expect(html.indexOf(note)).toBeGreaterThan(html.indexOf('>ch <'));
  });
});
