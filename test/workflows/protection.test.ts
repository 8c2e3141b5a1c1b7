// biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow steps are templates.
// A workflow is no way around a data-protection policy. A person's run queries as
// that person; whoever reads a run sees its outputs under their own policy; who may start a
// workflow is configurable. Real PostgreSQL, MariaDB, Temporal and a local HTTP receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../helpers/service.ts';
import {
  type Person,
  type ProtectionWorld,
  SECRET,
  startProtectionWorld,
  type Target,
} from './protection-world.ts';
import { type RunView, runWorkflow, type WorkflowView } from './setup.ts';

let w: ProtectionWorld;
let member: Person;
let admin: Person;

beforeAll(async () => {
  w = await startProtectionWorld();
  member = await w.person('member', 'mo.member@example.test');
  admin = await w.person('admin', 'al.admin@example.test');
});
afterAll(async () => w?.stop());

async function create(body: Record<string, unknown>): Promise<WorkflowView> {
  const res = await w.env.api<WorkflowView>('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Reads the run as `who` once it has ended (waiting with the organization key). */
async function readAs(who: Person, workflowId: string, runId: string): Promise<RunView> {
  await w.env.waitRun(workflowId, runId);
  const res = await w.env.api<RunView>(
    'GET',
    `/api/v1/workflows/${workflowId}/runs/${runId}`,
    undefined,
    who.bearer,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function page(who: Person, path: string): Promise<{ status: number; html: string }> {
  const { cookie } = await signIn(w.env.svc, who.email, who.password);
  const res = await w.env.svc.fetch(path, { headers: { cookie } });
  return { status: res.status, html: await res.text() };
}

const leaks = (x: unknown) => {
  const text = typeof x === 'string' ? x : JSON.stringify(x);
  return text.includes(SECRET.email) || text.includes(SECRET.ssn);
};

/** A lookup of the protected row, then an API call whose body copies the protected columns. */
function leakyWorkflow(t: Pick<Target, 'credentialId'>, name: string, hook: string) {
  return {
    name,
    inputs: [{ key: 'who', description: 'Name', type: 'string' }],
    steps: [
      {
        name: 'lookup',
        action: {
          __type__: 'query',
          credential_id: t.credentialId,
          query: 'select name, email, ssn from people where name = ${who}',
        },
      },
      {
        name: 'send',
        action: {
          __type__: 'api',
          endpoint: `${w.env.receiver.url}${hook}`,
          method: 'POST',
          body: '{"email": "${step.lookup.output.rows[0][1]}", "ssn": "${step.lookup.output.rows[0][2]}"}',
        },
      },
    ],
  };
}

describe.each(['postgres', 'mariadb'] as const)(
  'workflow outputs under the reader’s policy (%s)',
  (engine) => {
    let target: Target;
    let wf: WorkflowView;
    const hook = `/copy-${engine}`;

    beforeAll(async () => {
      target = engine === 'postgres' ? w.pg : w.maria;
      wf = await create(leakyWorkflow(target, `Look up (${engine})`, hook));
    });

    it('a member’s run queries as the member: the step output and the API body are masked', async () => {
      const before = w.env.receiver.requests.length;
      const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, member.bearer);
      const run = await readAs(member, wf.id, runId);
      expect(run.status, run.error ?? '').toBe('succeeded');
      const out = run.steps![0]!.output!;
      expect(out.rows).toEqual([['Ada', '****', null]]);
      // The version is the one the governed pipeline planned the statement under.
      const [policy] = await w.env.svc.deps.sql<{ updated_at: Date }[]>`
        select updated_at from data_protection_policies where id = ${target.policyId}`;
      expect(out.protection).toEqual({
        database_id: target.databaseId,
        policy_id: target.policyId,
        policy_version: policy!.updated_at.toISOString(),
      });
      expect(leaks(run)).toBe(false);
      // The value the template copied into the request is the masked one, at the peer itself.
      const sent = w.env.receiver.requests.slice(before).filter((r) => r.path === hook);
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0]!.body)).toEqual({ email: '****', ssn: null });
      // The organization key that waited saw the same masked rows: they were masked at the source.
      const asKey = await w.env.api<RunView>('GET', `/api/v1/workflows/${wf.id}/runs/${runId}`);
      expect(leaks(asKey.body)).toBe(false);

      const html = await page(member, `/runs/${wf.id}/${runId}`);
      expect(html.status).toBe(200);
      expect(html.html).toContain('****');
      expect(leaks(html.html)).toBe(false);
      // The audit names the person the query ran as and the run it belongs to.
      const audited = await w.env.svc.deps.sql<
        { actor_kind: string; actor_user_id: string; actor_workflow_id: string }[]
      >`
        select actor_kind, actor_user_id, actor_workflow_id from audit_log where actor_workflow_run_id = ${runId}`;
      expect(audited).toEqual([
        { actor_kind: 'user', actor_user_id: member.userId, actor_workflow_id: wf.id },
      ]);
    });

    it('an admin who started the run sees the values; a member reading it sees them hidden', async () => {
      const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, admin.bearer);
      const own = await readAs(admin, wf.id, runId);
      expect(own.status, own.error ?? '').toBe('succeeded');
      expect(own.steps![0]!.output!.rows).toEqual([['Ada', SECRET.email, SECRET.ssn]]);
      expect(own.steps![0]!.output!.protection).toEqual({
        database_id: target.databaseId,
        policy_id: null,
        policy_version: null,
      });

      const other = await readAs(member, wf.id, runId);
      expect(leaks(other)).toBe(false);
      const [lookup, send] = other.steps!;
      expect(lookup!.output!.rows).toEqual([[null, null, null]]);
      expect(lookup!.output!.columns).toEqual(['name', 'email', 'ssn']);
      expect(String(lookup!.output!.redacted)).toMatch(/values hidden.*policy/);
      // The API step's body could carry the copied values: hidden for this reader too.
      expect(send!.output).toMatchObject({ body: null });

      const html = await page(member, `/runs/${wf.id}/${runId}`);
      expect(html.status).toBe(200);
      expect(leaks(html.html)).toBe(false);
      expect(html.html).toContain('values hidden');
      // The run list shows it without values either.
      const list = await page(member, '/runs');
      expect(list.html).toContain(runId);
      expect(leaks(list.html)).toBe(false);
    });
  },
);

describe('who may start a workflow (run_permissions)', () => {
  let adminsOnly: WorkflowView;

  beforeAll(async () => {
    adminsOnly = await create({
      ...leakyWorkflow(w.pg, 'Admins only', '/admins-only'),
      run_permissions: [{ role: 'admin' }],
    });
  });

  it('is shown on the workflow and validated field by field', async () => {
    expect(adminsOnly.run_permissions).toEqual([{ role: 'admin' }]);
    const plain = await create({ name: 'Anyone' });
    expect(plain.run_permissions).toEqual([]);
    const bad = await w.env.api('POST', '/api/v1/workflows', {
      name: 'Bad',
      run_permissions: [{ role: 'boss' }, { user_id: 'usr_01J00000000000000000000000' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors!.map((e) => e.path)).toEqual(['run_permissions.0']);
    const ghost = await w.env.api('POST', '/api/v1/workflows', {
      name: 'Ghost',
      run_permissions: [{ user_id: 'usr_01J00000000000000000000000' }],
    });
    expect(ghost.status).toBe(422);
    expect(ghost.body.errors).toEqual([
      { path: 'run_permissions.0.user_id', message: 'no such person in this organization' },
    ]);
    const patched = await w.env.api<WorkflowView>('PATCH', `/api/v1/workflows/${plain.id}`, {
      run_permissions: [{ user_id: member.userId }],
    });
    expect(patched.body.run_permissions).toEqual([{ user_id: member.userId }]);
  });

  it('answers 404 to a member who may not start it, on the run endpoints too', async () => {
    const start = await w.env.api(
      'POST',
      `/api/v1/workflows/${adminsOnly.id}/run`,
      { who: 'Ada' },
      member.bearer,
    );
    expect(start.status).toBe(404);
    const runId = await runWorkflow(w.env, adminsOnly.id, { who: 'Ada' }, admin.bearer);
    await w.env.waitRun(adminsOnly.id, runId);
    for (const path of [`/runs`, `/runs/${runId}`]) {
      const res = await w.env.api(
        'GET',
        `/api/v1/workflows/${adminsOnly.id}${path}`,
        undefined,
        member.bearer,
      );
      expect(res.status, path).toBe(404);
    }
    expect((await page(member, `/runs/${adminsOnly.id}/${runId}`)).status).toBe(404);
    expect((await page(member, '/runs')).html).not.toContain(runId);
    // The organization key is unrestricted.
    expect(await runWorkflow(w.env, adminsOnly.id, { who: 'Ada' })).toMatch(/^run_/);
  });

  it('hides the dashboard button from that member and refuses the form posted anyway', async () => {
    const open = await create(leakyWorkflow(w.pg, 'Open lookup', '/open-lookup'));
    const mapping = [{ workflow_input_key: 'who', column: 'name' }];
    const d = await w.env.api<{ id: string; panels: Array<{ id: string; actions: Array<{ id: string }> }> }>(
      'POST',
      '/v1/dashboards',
      {
        name: 'People',
        restricted_access: false,
        panels: [
          {
            title: 'People',
            inputs: [],
            actions: [
              { label: 'Open lookup', workflow_id: open.id, input_mappings: mapping },
              { label: 'Admin lookup', workflow_id: adminsOnly.id, input_mappings: mapping },
            ],
            details: {
              __type__: 'query',
              query: 'select id, name, email from people',
              credential_id: w.pg.credentialId,
            },
          },
        ],
      },
      admin.bearer,
    );
    expect(d.status, JSON.stringify(d.body)).toBe(201);
    const panel = d.body.panels[0]!;
    const html = (await page(member, `/dashboards/${d.body.id}`)).html;
    expect(html).toContain('Open lookup');
    expect(html).not.toContain('Admin lookup');
    expect(leaks(html)).toBe(false);
    expect((await page(admin, `/dashboards/${d.body.id}`)).html).toContain('Admin lookup');

    const { cookie, csrf } = await signIn(w.env.svc, member.email, member.password);
    const before = await w.env.api<{ data: unknown[] }>('GET', `/api/v1/workflows/${adminsOnly.id}/runs`);
    const posted = await w.env.svc.fetch(
      `/dashboards/${d.body.id}/panels/${panel.id}/actions/${panel.actions[1]!.id}`,
      {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: w.env.svc.url },
        body: new URLSearchParams({ _csrf: csrf, 'row.name': 'Ada' }),
        redirect: 'manual',
      },
    );
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toContain('error=');
    const after = await w.env.api<{ data: unknown[] }>('GET', `/api/v1/workflows/${adminsOnly.id}/runs`);
    expect(after.body.data).toHaveLength(before.body.data.length);

    // The row action the member may use runs as the member: masked output.
    const ran = await w.env.api<{ run_id: string }>(
      'POST',
      `/v1/dashboards/${d.body.id}/panels/${panel.id}/actions/${panel.actions[0]!.id}/run`,
      { row: { id: 1, name: 'Ada', email: '****' } },
      member.bearer,
    );
    expect(ran.status, JSON.stringify(ran.body)).toBe(201);
    const run = await readAs(member, open.id, ran.body.run_id);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.steps![0]!.output!.rows).toEqual([['Ada', '****', null]]);
    expect(leaks(run)).toBe(false);
  });
});

describe('access checked when the step runs', () => {
  it('fails the query step of a member without a grant on a restricted database', async () => {
    const wf = await create(leakyWorkflow(w.restricted, 'Restricted lookup', '/restricted'));
    const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, member.bearer);
    const run = await readAs(member, wf.id, runId);
    expect(run.status).toBe('failed');
    expect(run.steps![0]!.status).toBe('failed');
    expect(run.steps![0]!.error).toMatch(/not found|no such/i);
    expect(leaks(run)).toBe(false);
  });

  it('fails the paused run of a person disabled before an approval let its query run', async () => {
    const quitter = await w.person('member', 'quits@example.test');
    const wf = await create({
      ...leakyWorkflow(w.pg, 'Approved lookup', '/approved'),
      steps: [
        { name: 'sign_off', action: { __type__: 'approval' }, permissions: [{ role: 'admin' }] },
        ...leakyWorkflow(w.pg, 'x', '/approved').steps,
      ],
    });
    const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, quitter.bearer);
    await w.env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    const off = await w.env.api('PATCH', `/api/v1/users/${quitter.userId}`, { disabled: true });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    const ok = await w.env.api(
      'POST',
      `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`,
      {},
      admin.bearer,
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const run = await w.env.waitRun(wf.id, runId);
    expect(run.status).toBe('failed');
    expect(run.steps![1]!.error).toMatch(/no longer active/);
    expect(leaks(run)).toBe(false);
  });

  it('judges an approver by the role they have now', async () => {
    const demoted = await w.person('admin', 'demoted@example.test');
    const wf = await create({
      name: 'Sign-off',
      steps: [{ name: 'sign_off', action: { __type__: 'approval' }, permissions: [{ role: 'admin' }] }],
    });
    const runId = await runWorkflow(w.env, wf.id, {}, member.bearer);
    await w.env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    await w.env.api('PATCH', `/api/v1/users/${demoted.userId}`, { role: 'member' });
    const refused = await w.env.api(
      'POST',
      `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`,
      {},
      demoted.bearer,
    );
    expect(refused.status).toBe(403);
    await w.env.api('POST', `/api/v1/workflows/${wf.id}/runs/${runId}/cancel`);
  });
});

describe('a policy changed after the run', () => {
  it('hides the rows from its holders: they were computed under the earlier rules', async () => {
    const wf = await create(leakyWorkflow(w.pg, 'Before the change', '/before-change'));
    const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, member.bearer);
    expect((await readAs(member, wf.id, runId)).steps![0]!.output!.rows).toEqual([['Ada', '****', null]]);
    const edited = await w.env.api(
      'PATCH',
      `/api/v1/desk/databases/${w.pg.databaseId}/policies/${w.pg.policyId}`,
      {
        description: 'edited after the run',
      },
    );
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const after = await readAs(member, wf.id, runId);
    expect(after.steps![0]!.output!.rows).toEqual([[null, null, null]]);
    expect(String(after.steps![0]!.output!.redacted)).toMatch(/has changed since the step ran/);
  });
});

describe('errors that quote values the reader may not see', () => {
  /** Three ways a run fails with the hidden value in its error. */
  const failing = (t: Pick<Target, 'credentialId'>) => ({
    cast: {
      name: 'Cast the ssn',
      inputs: [{ key: 'who', description: 'Name', type: 'string' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: t.credentialId,
            query: 'select cast(ssn as int) as n from people where name = ${who}',
          },
        },
      ],
    },
    condition: {
      name: 'Compare the ssn',
      inputs: [{ key: 'who', description: 'Name', type: 'string' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: t.credentialId,
            query: 'select ssn from people where name = ${who}',
          },
        },
        { name: 'check', action: { __type__: 'condition', expression: 'step.lookup.output.rows[0][0] > 5' } },
      ],
    },
    binding: {
      name: 'Bind the ssn',
      inputs: [{ key: 'who', description: 'Name', type: 'string' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: t.credentialId,
            query: 'select ssn from people where name = ${who}',
          },
        },
        {
          name: 'again',
          action: {
            __type__: 'query',
            credential_id: t.credentialId,
            query: 'select cast(${step.lookup.output.rows[0][0]} as int) as n',
          },
        },
      ],
    },
  });

  it.each(['cast', 'condition', 'binding'] as const)(
    'an admin’s failed run (%s): the admin reads the error, a member under the policy does not (REST and page)',
    async (kind) => {
      const wf = await create(failing(w.pg)[kind]);
      const runId = await runWorkflow(w.env, wf.id, { who: 'Ada' }, admin.bearer);
      const own = await readAs(admin, wf.id, runId);
      expect(own.status).toBe('failed');
      // The detail stays for the person the run ran as.
      expect(own.error).toContain(SECRET.ssn);

      const other = await readAs(member, wf.id, runId);
      expect(other.status).toBe('failed');
      expect(leaks(other)).toBe(false);
      expect(other.error).toMatch(/the error is hidden/);
      const html = await page(member, `/runs/${wf.id}/${runId}`);
      expect(html.status).toBe(200);
      expect(leaks(html.html)).toBe(false);
      const list = await page(member, '/runs');
      expect(list.html).toContain(runId);
      expect(leaks(list.html)).toBe(false);
      const runs = await w.env.api<{ data: unknown[] }>(
        'GET',
        `/api/v1/workflows/${wf.id}/runs`,
        undefined,
        member.bearer,
      );
      expect(runs.status).toBe(200);
      expect(leaks(runs.body)).toBe(false);
    },
  );
});

describe('a query step that binds values of a step hidden from the reader', () => {
  it('is hidden too, even against a database where the reader has no policy (REST and page)', async () => {
    const wf = await create({
      name: 'Carry the ssn over',
      steps: [
        {
          name: 'a',
          action: {
            __type__: 'query',
            credential_id: w.pg.credentialId,
            query: 'select ssn from people where id = 1',
          },
        },
        {
          name: 'b',
          action: {
            __type__: 'query',
            credential_id: w.open.credentialId,
            query: 'select ${step.a.output.rows[0][0]} as x',
          },
        },
      ],
    });
    const runId = await runWorkflow(w.env, wf.id, {}, admin.bearer);
    const own = await readAs(admin, wf.id, runId);
    expect(own.status, own.error ?? '').toBe('succeeded');
    // The value did reach step b, from a database the member may read whole.
    expect(own.steps![1]!.output!.rows).toEqual([[SECRET.ssn]]);
    expect(own.steps![1]!.output!.protection).toMatchObject({
      database_id: w.open.databaseId,
      policy_id: null,
    });

    const other = await readAs(member, wf.id, runId);
    expect(leaks(other)).toBe(false);
    const b = other.steps![1]!;
    expect(b.output!.rows).toEqual([[null]]);
    expect(String(b.output!.redacted)).toMatch(/it may bind values of step a/);
    const html = await page(member, `/runs/${wf.id}/${runId}`);
    expect(html.status).toBe(200);
    expect(leaks(html.html)).toBe(false);
  });
});

describe('the run page’s audit entries for an admin under the policy', () => {
  it('hide the value a failed query step quoted; the admin who ran it reads it', async () => {
    const policed = await w.person('admin', 'pat.policed@example.test');
    const assigned = await w.env.api(
      'PUT',
      `/api/v1/desk/databases/${w.pg.databaseId}/policies/${w.pg.policyId}/assignments`,
      { users: [policed.userId], roles: ['member'] },
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    const wf = await create({
      name: 'Cast the ssn (audited)',
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: w.pg.credentialId,
            query: 'select cast(ssn as int) as n from people where id = 1',
          },
        },
      ],
    });
    const runId = await runWorkflow(w.env, wf.id, {}, admin.bearer);
    expect((await readAs(admin, wf.id, runId)).status).toBe('failed');

    const own = await page(admin, `/runs/${wf.id}/${runId}`);
    expect(own.html).toContain(SECRET.ssn);
    const other = await page(policed, `/runs/${wf.id}/${runId}`);
    expect(other.status).toBe(200);
    expect(other.html).toContain('the error is hidden');
    expect(leaks(other.html)).toBe(false);
  });
});
