// Short steps run as local activities inside the workflow task (workflows/README.md "Local
// activities"); runs begun before that keep replaying as regular activities after a deploy.
import { readFile } from 'node:fs/promises';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowBundle } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

const { EventType } = proto.temporal.api.enums.v1;
let env: WorkflowEnv;

beforeAll(async () => {
  env = await startWorkflowEnv();
  env.receiver.on('/short', () => ({ status: 200, body: { ok: 'short' } }));
  env.receiver.on('/long', () => ({ status: 200, body: { ok: 'long' } }));
});
afterAll(() => env?.stop());

describe('local activities', () => {
  it('runs short steps, chat and bookkeeping locally and steps with long timeouts as activities', async () => {
    const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'mixed',
      steps: [
        {
          name: 'q',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: 'select 41 + 1 as n',
            timeout_seconds: 5,
          },
        },
        {
          name: 'short',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/short`, timeout_seconds: 2 },
        },
        {
          name: 'notify',
          action: { __type__: 'chat', chat_channel: '#ops-alerts', message: 'n=${step.q.output.rows[0][0]}' },
        },
        { name: 'long', action: { __type__: 'api', endpoint: `${env.receiver.url}/long` } },
      ],
    });
    expect(wf.status).toBe(201);
    const runId = await runWorkflow(env, wf.body.id);
    const run = await env.waitRun(wf.body.id, runId);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.steps!.map((s) => s.output)).toMatchObject([
      { rows: [[42]] },
      { status_code: 200, body: { ok: 'short' } },
      { channel: 'C0000000002' },
      { status_code: 200, body: { ok: 'long' } },
    ]);
    expect(env.chat.messages.at(-1)?.text).toBe('n=42');

    const history = await env.svc.deps.temporal!.client.workflow.getHandle(runId).fetchHistory();
    const events = history.events ?? [];
    // Only the step without a short timeout of its own went through the task queue.
    const scheduled = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)).toEqual([
      'callApiStep',
    ]);
    // The query's plan, the query (a read), short api, chat and finishRun: each a local activity
    // result recorded as a marker.
    const localResults = events.filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(localResults).toHaveLength(5);
  });

  it('replays a run recorded before local activities existed without a nondeterminism error', async () => {
    // Recorded with the interpreter as it was before local activities: query (5 s), condition,
    // chat, approval, api (5 s) and chat_reply, every one of them a regular activity. A worker
    // upgraded to local steps replays such in-flight runs from their history.
    const json = JSON.parse(
      await readFile(new URL('../fixtures/run-before-local-steps.history.json', import.meta.url), 'utf8'),
    );
    // Saved as the proto's own JSON (enum names, base64 payloads): fromObject reads it back.
    const history = proto.temporal.api.history.v1.History.fromObject(json);
    const types = (history.events ?? []).map((e) => e.eventType);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toHaveLength(7);
    await expect(
      Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, 'run-before-local-steps'),
    ).resolves.toBeUndefined();
  });
});
