// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// POST /api/v1/workflows/validate and /:id/validate (the editor's live check): the same verdict
// as saving, RFC 9457 problems naming each field, the cron preview, nothing ever written; and the
// shared security cases (no credentials, a member, a session without its CSRF token, another
// organization's workflow).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { insertOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { makeUser, type Problem, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let env: WorkflowEnv;
beforeAll(async () => {
  env = await startWorkflowEnv({ worker: false });
});
afterAll(async () => env?.stop());

async function count(): Promise<number> {
  const [row] = await env.svc.deps.sql<{ n: number }[]>`select count(*)::int as n from workflows`;
  return row!.n;
}

type Verdict = Problem & {
  valid?: boolean;
  cron_next_runs: string[];
  warnings: Array<{ path: string; message: string }>;
};

const sound = () => ({
  name: 'Nightly count',
  cron_schedule: '30 2 * * *',
  inputs: [{ key: 'min', description: 'Smallest id', type: 'integer', default: 1 }],
  steps: [
    {
      name: 'count',
      action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select ${min}::int' },
    },
    { name: 'gate', action: { __type__: 'condition', expression: '${step.count.output.num_rows} == 1' } },
  ],
});

describe('POST /api/v1/workflows/validate', () => {
  it('answers valid with the next five cron runs in UTC, and writes nothing', async () => {
    const before = await count();
    const res = await env.api<Verdict>('POST', '/api/v1/workflows/validate', sound());
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(true);
    expect(res.body.errors).toEqual([]);
    expect(res.body.cron_next_runs).toHaveLength(5);
    for (const t of res.body.cron_next_runs) expect(t).toMatch(/T02:30:00\.000Z$/);
    expect(await count()).toBe(before);
  });

  it('names each field the save would refuse, in a problem document, and writes nothing', async () => {
    const before = await count();
    const body = sound();
    body.inputs[0]!.default = null as never;
    body.steps[0]!.action.credential_id = 'crd_00000000000000000000000000';
    body.steps[1]!.action.expression = '${step.later.output.x} == 1';
    const res = await env.api<Verdict>('POST', '/api/v1/workflows/validate', body);
    expect(res.status).toBe(422);
    expect(res.body.type).toMatch(/\/problems\/validation$/);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { path: 'steps.0.action.credential_id', message: 'no such credential in this organization' },
        { path: 'steps.1.action.expression', message: 'step later does not come before this step' },
      ]),
    );
    // An input without a default is no error on a schedule, only a warning (a scheduled run
    // fails at the step that needs it).
    expect(res.body.errors!.map((e) => e.path)).not.toContain('cron_schedule');
    expect(res.body.warnings).toEqual([{ path: 'cron_schedule', message: expect.stringContaining('min') }]);
    // The preview does not wait for the rest of the definition to be sound.
    expect(res.body.cron_next_runs).toHaveLength(5);
    expect(await count()).toBe(before);
  });

  it('gives schema errors the same paths as POST does', async () => {
    const body = {
      name: '',
      steps: [{ name: '1st', action: { __type__: 'approval', on_timeout: 'later' } }],
    };
    const [check, save] = await Promise.all([
      env.api<Verdict>('POST', '/api/v1/workflows/validate', body),
      env.api<Problem>('POST', '/api/v1/workflows', body),
    ]);
    expect(check.status).toBe(422);
    expect(save.status).toBe(422);
    expect(check.body.errors).toEqual(save.body.errors);
    expect(check.body.errors!.map((e) => e.path)).toEqual(
      expect.arrayContaining(['name', 'steps.0.name', 'steps.0.action.on_timeout']),
    );
    expect(check.body.cron_next_runs).toEqual([]);
  });

  it('refuses a body that is not JSON with a 400 problem', async () => {
    const res = await env.api<Problem>('POST', '/api/v1/workflows/validate', '{not json');
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('JSON');
  });
});

describe('POST /api/v1/workflows/:id/validate', () => {
  it('checks against the stored workflow: a stored header value may be kept with null', async () => {
    const def = {
      name: 'With a secret header',
      steps: [
        {
          name: 'call',
          action: {
            __type__: 'api',
            endpoint: 'https://example.test/x',
            headers: { Authorization: 'Bearer s' },
          },
        },
      ],
    };
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', def);
    expect(created.status).toBe(201);
    const roundTrip = { ...def, steps: created.body.steps };
    const res = await env.api<Verdict>('POST', `/api/v1/workflows/${created.body.id}/validate`, roundTrip);
    expect(res.status).toBe(200);
    // The same body as a new workflow has no stored value to keep.
    const asNew = await env.api<Verdict>('POST', '/api/v1/workflows/validate', roundTrip);
    expect(asNew.status).toBe(422);
    expect(asNew.body.errors).toEqual([
      { path: 'steps.0.action.headers.Authorization', message: 'a value is required (none is stored)' },
    ]);
  });

  it('is a 404 for a workflow that does not exist', async () => {
    const res = await env.api<Problem>(
      'POST',
      '/api/v1/workflows/wf_00000000000000000000000000/validate',
      sound(),
    );
    expect(res.status).toBe(404);
  });
});

describe('validate: security', () => {
  it('needs credentials', async () => {
    const res = await env.svc.fetch('/api/v1/workflows/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sound()),
    });
    expect(res.status).toBe(401);
  });

  it('is for admins, as saving is', async () => {
    const member = await makeUser(env, 'member', 'val.member@example.test');
    const res = await env.api<Problem>('POST', '/api/v1/workflows/validate', sound(), member.bearer);
    expect(res.status).toBe(403);
  });

  it('with a session cookie needs the CSRF token', async () => {
    const session = await signIn(env.svc, env.svc.admin.email, env.svc.admin.password);
    const headers = { cookie: session.cookie, 'content-type': 'application/json' };
    const body = JSON.stringify(sound());
    const url = '/api/v1/workflows/validate';
    expect((await env.svc.fetch(url, { method: 'POST', headers, body })).status).toBe(403);
    const ok = await env.svc.fetch(url, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': session.csrf },
      body,
    });
    expect(ok.status).toBe(200);
  });

  it("does not check against another organization's workflow (404, as if it did not exist)", async () => {
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', { name: 'Ours' });
    expect(created.status).toBe(201);
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
    const res = await env.api<Problem>(
      'POST',
      `/api/v1/workflows/${created.body.id}/validate`,
      { name: 'Ours' },
      { 'x-api-key': secret },
    );
    expect(res.status).toBe(404);
  });
});
