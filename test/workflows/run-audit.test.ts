// Starting a run, canceling it and deciding its approval step are each one typed event on the
// audit chain, by the person (or key) who did it, through every door: REST, the run's page and
// the Reviews inbox. Input values and approval comments never reach the log; the chain verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { signIn } from '../helpers/service.ts';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

let env: WorkflowEnv;
let adminId: string;
let workflowId: string;
/** Signed in with a password: the page forms. */
let member: { userId: string; cookie: string; csrf: string };
/** A personal token: the REST approvals. */
let tokenMember: { userId: string; bearer: Record<string, string> };

// Values that must never be on the log: an input value and an approver's comment.
const INPUT_VALUE = 'ssn 123-45-6789 input value';
const COMMENT = 'saw ssn 987-65-4321 in the comment';

interface RunEvent {
  event: string;
  actor_kind: string;
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  origin: string;
  subject: Record<string, unknown>;
}

/** Every run.* event about a run, in chain order. */
const eventsOf = (runId: string) => env.svc.deps.sql<RunEvent[]>`
  select event, actor_kind, actor_user_id, actor_api_key_id, origin, subject
  from audit_log where event like 'run.%' and subject->>'run_id' = ${runId} order by seq`;

const form = (path: string, fields: Record<string, string>) =>
  env.svc.fetch(path, {
    method: 'POST',
    headers: { cookie: member.cookie },
    body: new URLSearchParams({ _csrf: member.csrf, ...fields }),
    redirect: 'manual',
  });

const waiting = async (runId: string) =>
  env.waitRun(workflowId, runId, (r) => r.status === 'waiting_for_approval');

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: true });
  const [admin] = await env.svc.deps.sql<{ id: string; org_id: string }[]>`
    select id, org_id from users where email = ${env.svc.admin.email}`;
  adminId = admin!.id;
  const user = await createUser(env.svc.deps.sql, {
    orgId: admin!.org_id,
    email: 'run.audit.member@example.test',
    role: 'member',
    password: 'run audit password 1',
  });
  member = { userId: user.id, ...(await signIn(env.svc, user.email, 'run audit password 1')) };
  tokenMember = await makeUser(env, 'member', 'run.audit.token@example.test');
  const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'audited approval',
    inputs: [{ key: 'note', description: 'free text', type: 'string' }],
    steps: [
      {
        name: 'ok',
        action: { __type__: 'approval', reviews_required: 1 },
        permissions: [{ role: 'member' }],
      },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  workflowId = created.body.id;
});
afterAll(async () => {
  await env?.stop();
});

describe('run starts and cancels on the audit log', () => {
  it('REST start: one run.started by the key’s owner, the key named, input keys only', async () => {
    const runId = await runWorkflow(env, workflowId, { note: INPUT_VALUE });
    await waiting(runId);
    const events = await eventsOf(runId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'run.started',
      actor_kind: 'user',
      actor_user_id: adminId,
      origin: 'user',
      subject: { workflow_id: workflowId, run_id: runId, trigger: 'api', input_keys: ['note'] },
    });
    expect(events[0]!.actor_api_key_id).not.toBeNull();

    // REST cancel: one run.canceled by the same caller, after which the run ends canceled.
    const res = await env.api('POST', `/api/v1/workflows/${workflowId}/runs/${runId}/cancel`, {});
    expect(res.status).toBe(202);
    expect((await env.waitRun(workflowId, runId)).status).toBe('canceled');
    const after = await eventsOf(runId);
    expect(after.map((e) => e.event)).toEqual(['run.started', 'run.canceled']);
    expect(after[1]).toMatchObject({
      actor_user_id: adminId,
      subject: {
        workflow_id: workflowId,
        run_id: runId,
        status: 'waiting_for_approval',
        before_start: false,
      },
    });
    // A cancel of an ended run is refused and records nothing.
    const again = await env.api('POST', `/api/v1/workflows/${workflowId}/runs/${runId}/cancel`, {});
    expect(again.status).toBe(409);
    expect(await eventsOf(runId)).toHaveLength(2);
  });

  it('a start retried with its Idempotency-Key is one run and one event', async () => {
    const headers = { 'idempotency-key': '"run-audit-once"' };
    const first = await runWorkflow(env, workflowId, { note: INPUT_VALUE }, headers);
    const again = await runWorkflow(env, workflowId, { note: INPUT_VALUE }, headers);
    expect(again).toBe(first);
    await waiting(first);
    expect((await eventsOf(first)).map((e) => e.event)).toEqual(['run.started']);
    await env.api('POST', `/api/v1/workflows/${workflowId}/runs/${first}/cancel`, {});
  });

  it('page start and page cancel: one event each by the signed-in person, no key', async () => {
    const res = await form(`/workflows/${workflowId}/run`, { 'input.note': INPUT_VALUE });
    expect(res.status).toBe(303);
    const runId = /(run_[0-9A-Z]{26})/.exec(res.headers.get('location') ?? '')?.[1];
    expect(runId, res.headers.get('location') ?? '').toBeDefined();
    await waiting(runId!);
    const cancel = await form(`/runs/${workflowId}/${runId}/cancel`, {});
    expect(decodeURIComponent(cancel.headers.get('location')!)).toContain('Cancel requested');
    const events = await eventsOf(runId!);
    expect(events.map((e) => [e.event, e.actor_user_id, e.actor_api_key_id])).toEqual([
      ['run.started', member.userId, null],
      ['run.canceled', member.userId, null],
    ]);
    expect(events[0]!.subject).toMatchObject({ trigger: 'manual', input_keys: ['note'] });
  });
});

describe('run approval decisions on the audit log', () => {
  it('REST approve, page reject and inbox approve: one run.approval_decided each, by the approver', async () => {
    // REST, a personal token, with a comment: recorded as commented, never its text.
    const viaRest = await runWorkflow(env, workflowId, { note: INPUT_VALUE });
    await waiting(viaRest);
    const decided = await env.api(
      'POST',
      `/api/v1/workflows/${workflowId}/runs/${viaRest}/approvals`,
      { decision: 'approve', comment: COMMENT },
      tokenMember.bearer,
    );
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect((await env.waitRun(workflowId, viaRest)).status).toBe('succeeded');

    // The run's page: a rejection.
    const viaPage = await runWorkflow(env, workflowId, { note: INPUT_VALUE });
    await waiting(viaPage);
    const rejected = await form(`/runs/${workflowId}/${viaPage}/approvals`, { decision: 'reject' });
    expect(rejected.status).toBe(303);
    expect(rejected.headers.get('location')).toContain(`/runs/${workflowId}/${viaPage}`);
    expect((await env.waitRun(workflowId, viaPage)).status).toBe('rejected');

    // The Reviews inbox's inline form: back to the inbox.
    const viaInbox = await runWorkflow(env, workflowId, { note: INPUT_VALUE });
    await waiting(viaInbox);
    // The initiator may not approve their own run: refused by the run, so no event.
    const refused = await env.api('POST', `/api/v1/workflows/${workflowId}/runs/${viaInbox}/approvals`, {
      decision: 'approve',
      comment: null,
    });
    expect(refused.status).toBe(403);
    const inbox = await form(`/runs/${workflowId}/${viaInbox}/approvals`, {
      decision: 'approve',
      comment: '',
      back: 'reviews',
    });
    expect(inbox.headers.get('location')).toMatch(/^\/reviews/);
    expect((await env.waitRun(workflowId, viaInbox)).status).toBe('succeeded');

    const decisions = async (runId: string) =>
      (await eventsOf(runId)).filter((e) => e.event === 'run.approval_decided');
    const rest = await decisions(viaRest);
    expect(rest).toHaveLength(1);
    expect(rest[0]).toMatchObject({
      actor_user_id: tokenMember.userId,
      origin: 'user',
      subject: {
        workflow_id: workflowId,
        run_id: viaRest,
        step: 'ok',
        decision: 'approve',
        commented: true,
        approvals: 1,
        required: 1,
      },
    });
    const page = await decisions(viaPage);
    expect(page).toHaveLength(1);
    expect(page[0]).toMatchObject({
      actor_user_id: member.userId,
      actor_api_key_id: null,
      subject: { step: 'ok', decision: 'reject', commented: false },
    });
    const fromInbox = await decisions(viaInbox);
    expect(fromInbox).toHaveLength(1);
    expect(fromInbox[0]).toMatchObject({
      actor_user_id: member.userId,
      subject: { step: 'ok', decision: 'approve', commented: false },
    });
    // Each run: its start, its one decision, nothing else.
    for (const runId of [viaRest, viaPage, viaInbox])
      expect((await eventsOf(runId)).map((e) => e.event)).toEqual(['run.started', 'run.approval_decided']);
  });

  it('no input value or comment text anywhere on the log, and the chain verifies', async () => {
    const [leaks] = await env.svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log a
      where a::text like ${'%123-45-6789%'} or a::text like ${'%987-65-4321%'}`;
    expect(leaks!.n).toBe(0);
    const [recorded] = await env.svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log
      where event in ('run.started', 'run.canceled', 'run.approval_decided')`;
    expect(recorded!.n).toBeGreaterThanOrEqual(10);
    const verify = await env.api<{ ok: boolean; entries: number }>('GET', '/api/v1/audit/verify');
    expect(verify.status).toBe(200);
    expect(verify.body.ok).toBe(true);
  });
});
