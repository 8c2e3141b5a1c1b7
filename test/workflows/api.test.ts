// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// The workflow endpoints (SPEC.md 4.1): defaults, validation (422 naming the field, nothing
// written), archive semantics, typed run inputs, and the shared security cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { insertOrganization } from '../../store/users.ts';
import { startTestService } from '../helpers/service.ts';
import {
  makeUser,
  type Problem,
  runWorkflow,
  startWorkflowEnv,
  type WorkflowEnv,
  type WorkflowView,
} from './setup.ts';

let env: WorkflowEnv;
beforeAll(async () => {
  env = await startWorkflowEnv();
});
afterAll(async () => env?.stop());

async function count(): Promise<number> {
  const [row] = await env.svc.deps.sql<{ n: number }[]>`select count(*)::int as n from workflows`;
  return row!.n;
}

const chatStep = { name: 'hello', action: { __type__: 'chat', chat_channel: '#general', message: 'hi' } };

describe('POST /api/v1/workflows', () => {
  it('creates with unset optional fields null, generated step ids and empty permissions', async () => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Minimal',
      steps: [chatStep],
    });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^wf_[0-9A-Z]{26}$/);
    expect(res.body).toMatchObject({
      name: 'Minimal',
      group: null,
      cron_schedule: null,
      trigger_tracker_label: null,
      inputs: [],
      archived_at: null,
    });
    expect(res.body.steps[0]).toMatchObject({ name: 'hello', condition: null, permissions: [] });
    expect(res.body.steps[0]!.id).toMatch(/^wfs_[0-9A-Z]{26}$/);
    expect(res.body.steps[0]!.action).toEqual({
      __type__: 'chat',
      chat_channel: '#general',
      message: 'hi',
      link_text: null,
    });
    expect(res.body.created_at).toMatch(/Z$/);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    [
      'an unknown __type__',
      { steps: [{ name: 's', action: { __type__: 'email', to: 'x' } }] },
      'steps.0.action.__type__',
    ],
    ['duplicate step names', { steps: [chatStep, chatStep] }, 'steps.1.name'],
    [
      'a reference to a later step',
      {
        steps: [
          {
            name: 'a',
            action: { __type__: 'chat', chat_channel: '#general', message: '${step.b.output.channel}' },
          },
          { name: 'b', action: { __type__: 'chat', chat_channel: '#general', message: 'x' } },
        ],
      },
      'steps.0.action.message',
    ],
    [
      'a reference to an unknown input',
      { steps: [{ name: 'a', action: { __type__: 'chat', chat_channel: '#g', message: 'hi ${who}' } }] },
      'steps.0.action.message',
    ],
    [
      'an unknown input in a step condition',
      { steps: [{ ...chatStep, condition: 'flag == true' }] },
      'steps.0.condition',
    ],
    ['a malformed cron expression', { cron_schedule: '61 * * * *' }, 'cron_schedule'],
    ['a cron expression with six fields', { cron_schedule: '0 0 * * * *' }, 'cron_schedule'],
    [
      'a chat_reply naming a step that is not a chat step',
      {
        steps: [
          { name: 'gate', action: { __type__: 'condition', expression: 'true' } },
          { name: 'r', action: { __type__: 'chat_reply', step_name: 'gate', message: 'x' } },
        ],
      },
      'steps.1.action.step_name',
    ],
    [
      'a misspelt action field',
      {
        steps: [{ name: 'c', action: { __type__: 'api', endpoint: 'https://x.test', expected_stauts: 200 } }],
      },
      'steps.0.action.expected_stauts',
    ],
    [
      'an unknown credential',
      {
        steps: [
          {
            name: 'q',
            action: { __type__: 'query', credential_id: 'crd_01M7ZKMQ9E0CFDEVZT88063CXA', query: 'select 1' },
          },
        ],
      },
      'steps.0.action.credential_id',
    ],
    ['a bad input type', { inputs: [{ key: 'n', type: 'decimal' }] }, 'inputs.0.type'],
    ['an unparsable expression', { steps: [{ ...chatStep, condition: '1 >' }] }, 'steps.0.condition'],
  ];
  for (const [what, body, path] of invalid) {
    it(`refuses ${what} with a 422 naming ${path}, writing nothing`, async () => {
      const before = await count();
      const res = await env.api('POST', '/api/v1/workflows', { name: 'bad', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors!.map((e) => e.path)).toContain(path);
      expect(await count()).toBe(before);
    });
  }

  it('refuses a tracker label when the tracker integration is not configured', async () => {
    const bare = await startTestService({ temporal: false });
    try {
      const res = await bare.fetch('/api/v1/workflows', {
        method: 'POST',
        headers: { 'x-api-key': bare.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'tracked', trigger_tracker_label: { name: 'bug' } }),
      });
      expect(res.status).toBe(422);
      const body = (await res.json()) as Problem;
      expect(body.errors![0]).toMatchObject({ path: 'trigger_tracker_label' });
    } finally {
      await bare.stop();
    }
  });
});

describe('GET, PATCH, DELETE /api/v1/workflows/:id', () => {
  let wf: WorkflowView;
  beforeAll(async () => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Editable',
      group: 'ops',
      steps: [
        {
          name: 'call',
          action: {
            __type__: 'api',
            endpoint: `${env.receiver.url}/edit`,
            headers: { 'X-Token': 'tok-123' },
          },
        },
      ],
    });
    wf = res.body;
  });

  it('patches only the fields given and keeps a header sent back as null', async () => {
    const res = await env.api<WorkflowView>('PATCH', `/api/v1/workflows/${wf.id}`, {
      name: 'Edited',
      steps: wf.steps,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Edited', group: 'ops' });
    expect(res.body.steps[0]!.id).toBe(wf.steps[0]!.id);
    const run = await env.waitRun(wf.id, await runWorkflow(env, wf.id));
    expect(run.status).toBe('succeeded');
    expect(env.receiver.requests.find((r) => r.path === '/edit')!.headers['x-token']).toBe('tok-123');
  });

  it('refuses a null header value with nothing stored for it', async () => {
    const res = await env.api('PATCH', `/api/v1/workflows/${wf.id}`, {
      steps: [
        { name: 'call', action: { __type__: 'api', endpoint: 'https://x.test', headers: { 'X-New': null } } },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors![0]!.path).toBe('steps.0.action.headers.X-New');
  });

  it('lists by group, and archives on DELETE: kept, hidden from lists, no longer runnable', async () => {
    const listed = await env.api<{ data: WorkflowView[] }>('GET', '/api/v1/workflows?group=ops');
    expect(listed.body.data.map((w) => w.id)).toEqual([wf.id]);
    const del = await env.api<WorkflowView>('DELETE', `/api/v1/workflows/${wf.id}`);
    expect(del.status).toBe(200);
    expect(del.body.archived_at).not.toBeNull();
    expect((await env.api('GET', `/api/v1/workflows/${wf.id}`)).status).toBe(200);
    expect((await env.api<{ data: WorkflowView[] }>('GET', '/api/v1/workflows?group=ops')).body.data).toEqual(
      [],
    );
    const all = await env.api<{ data: WorkflowView[] }>(
      'GET',
      '/api/v1/workflows?group=ops&include_archived=true',
    );
    expect(all.body.data.map((w) => w.id)).toEqual([wf.id]);
    const run = await env.api('POST', `/api/v1/workflows/${wf.id}/run`, {});
    expect(run.status).toBe(409);
  });
});

describe('POST /api/v1/workflows/:id/run', () => {
  let wfId: string;
  beforeAll(async () => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Typed',
      inputs: [
        { key: 'n', description: 'count', type: 'integer' },
        { key: 'ratio', description: '', type: 'float' },
        { key: 'ok', description: '', type: 'boolean' },
        { key: 'who', description: '', type: 'string' },
      ],
      steps: [
        {
          name: 'gate',
          action: { __type__: 'condition', expression: '${n} > 0 && ${ok}', on_false: 'succeed' },
        },
      ],
    });
    wfId = res.body.id;
  });

  it('answers in plain text naming the run id, with the inputs typed', async () => {
    const res = await env.svc.fetch(`/api/v1/workflows/${wfId}/run`, {
      method: 'POST',
      headers: { 'x-api-key': env.svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ n: 3, ratio: 0.5, ok: true, who: 'ann' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const runId = /run_[0-9A-Z]{26}/.exec(text)![0];
    const run = await env.waitRun(wfId, runId);
    expect(run).toMatchObject({
      status: 'succeeded',
      trigger: 'api',
      inputs: { n: 3, ratio: 0.5, ok: true, who: 'ann' },
    });
  });

  it.each([
    [{ n: '3', ratio: 1, ok: true, who: 'a' }, 'n'],
    [{ n: 1.5, ratio: 1, ok: true, who: 'a' }, 'n'],
    [{ n: 1, ratio: 1, ok: 'yes', who: 'a' }, 'ok'],
    [{ n: 1, ratio: 1, ok: true }, 'who'],
    [{ n: 1, ratio: 1, ok: true, who: 'a', extra: 1 }, 'extra'],
  ])('refuses %j with a 422 naming %s', async (inputs, path) => {
    const res = await env.api('POST', `/api/v1/workflows/${wfId}/run`, inputs);
    expect(res.status).toBe(422);
    expect(res.body.errors![0]!.path).toBe(path);
  });
});

describe('security', () => {
  it('needs credentials', async () => {
    const res = await env.svc.fetch('/api/v1/workflows');
    expect(res.status).toBe(401);
  });

  it("hides another organization's workflows and runs", async () => {
    const wf = await env.api<WorkflowView>('POST', '/api/v1/workflows', { name: 'Mine', steps: [chatStep] });
    const org = await insertOrganization(env.svc.deps.sql, { id: newId('org'), name: 'Other' });
    const owner = await createUser(env.svc.deps.sql, {
      orgId: org.id,
      email: `other-${org.id}@example.test`,
      role: 'super_admin',
      password: null,
    });
    const { secret } = await createApiKey(env.svc.deps.sql, {
      orgId: org.id,
      name: 'other',
      createdBy: null,
      ownerUserId: owner.id,
    });
    const other = { 'x-api-key': secret };
    for (const [method, path] of [
      ['GET', `/api/v1/workflows/${wf.body.id}`],
      ['PATCH', `/api/v1/workflows/${wf.body.id}`],
      ['DELETE', `/api/v1/workflows/${wf.body.id}`],
      ['POST', `/api/v1/workflows/${wf.body.id}/run`],
      ['GET', `/api/v1/workflows/${wf.body.id}/runs`],
    ] as const) {
      const res = await env.api(
        method,
        path,
        method === 'GET' || method === 'DELETE' ? undefined : {},
        other,
      );
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const list = await env.api<{ data: WorkflowView[] }>('GET', '/api/v1/workflows', undefined, other);
    expect(list.body.data).toEqual([]);
  });

  it('lets a member read and run but not change workflows', async () => {
    const member = await makeUser(env, 'member', 'reader@example.test');
    const res = await env.api('POST', '/api/v1/workflows', { name: 'nope' }, member.bearer);
    expect(res.status).toBe(403);
    expect((await env.api('GET', '/api/v1/workflows', undefined, member.bearer)).status).toBe(200);
  });
});
