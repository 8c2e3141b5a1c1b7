// biome-ignore-all lint/suspicious/noTemplateCurlyInString: step bodies are expression-language templates.
// Cron: one Temporal Schedule per workflow in UTC, kept in step with the definition, fired here
// with the schedule's trigger (rather than waiting for the minute), and removed on archive.
import { ScheduleNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextRuns } from '../../automation/cron.ts';
import { scheduleId } from '../../automation/schedules.ts';
import { type RunView, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let env: WorkflowEnv;
beforeAll(async () => {
  env = await startWorkflowEnv();
});
afterAll(async () => env?.stop());

describe('cron schedule', () => {
  let wf: WorkflowView;
  const schedule = () => env.svc.deps.temporal!.client.schedule.getHandle(scheduleId(wf.id));

  it('creates one UTC schedule with the workflow', async () => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Nightly',
      cron_schedule: '0 3 * * *',
      steps: [{ name: 'ping', action: { __type__: 'api', endpoint: `${env.receiver.url}/cron` } }],
    });
    expect(res.status).toBe(201);
    wf = res.body;
    expect(wf.cron_schedule).toBe('0 3 * * *');
    const described = await schedule().describe();
    expect(described.spec.timezone ?? 'UTC').toBe('UTC');
    expect(described.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 3, end: 3, step: 1 }] });
  });

  it('fires: a cron run with a run_ id runs the steps', async () => {
    await schedule().trigger();
    let runs: RunView[] = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      runs = (await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${wf.id}/runs`)).body.data;
      if (runs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(runs).toHaveLength(1);
    expect(runs[0]!.id).toMatch(/^run_[0-9A-Z]{26}$/);
    expect(runs[0]!.trigger).toBe('cron');
    const run = await env.waitRun(wf.id, runs[0]!.id);
    expect(run.status).toBe('succeeded');
    expect(env.receiver.requests.filter((r) => r.path === '/cron')).toHaveLength(1);
    // Recorded once, by the run itself: no person started it.
    const events = await env.svc.deps.sql<{ actor_kind: string; actor_workflow_run_id: string }[]>`
      select actor_kind, actor_workflow_run_id from audit_log
      where event = 'run.started' and subject->>'run_id' = ${runs[0]!.id} and subject->>'trigger' = 'cron'`;
    expect(events).toEqual([{ actor_kind: 'workflow_run', actor_workflow_run_id: runs[0]!.id }]);
  });

  it('updates the schedule when the expression changes', async () => {
    const res = await env.api('PATCH', `/api/v1/workflows/${wf.id}`, { cron_schedule: '*/5 * * * *' });
    expect(res.status).toBe(200);
    const described = await schedule().describe();
    expect(described.spec.calendars?.[0]).toMatchObject({ minute: [{ start: 0, end: 59, step: 5 }] });
  });

  it('removes the schedule when the workflow is archived', async () => {
    expect((await env.api('DELETE', `/api/v1/workflows/${wf.id}`)).status).toBe(200);
    await expect(schedule().describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });
});

// Parameterized jobs are scheduled too — with the defaults of their inputs.
describe('cron with inputs', () => {
  // SPEC.md 2.1's input definition has no default: a schedule on such a workflow is accepted,
  // the editor warns, and only a step that uses the input fails, saying why.
  it('accepts a schedule while an input has no default; the editor check warns, naming it', async () => {
    const definition = {
      name: 'Nightly report',
      cron_schedule: '0 4 * * *',
      inputs: [
        { key: 'region', description: 'where', type: 'string', default: 'eu' },
        { key: 'days', description: 'how far back', type: 'integer' },
      ],
      steps: [{ name: 'ping', action: { __type__: 'api', endpoint: `${env.receiver.url}/cron-inputs` } }],
    };
    const checked = await env.api<{ valid: boolean; warnings: Array<{ path: string; message: string }> }>(
      'POST',
      '/api/v1/workflows/validate',
      definition,
    );
    expect(checked.body.valid).toBe(true);
    expect(checked.body.warnings).toEqual([
      { path: 'cron_schedule', message: expect.stringContaining('no value for days') },
    ]);
    const res = await env.api('POST', '/api/v1/workflows', definition);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('a scheduled run without a value runs the steps that need none, and fails at the first that does', async () => {
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Report with a missing input',
      cron_schedule: '0 4 * * *',
      inputs: [
        { key: 'region', description: 'where', type: 'string', default: 'eu' },
        { key: 'days', description: 'how far back', type: 'integer' },
      ],
      steps: [
        {
          name: 'first',
          action: {
            __type__: 'api',
            endpoint: `${env.receiver.url}/cron-unset`,
            method: 'POST',
            body: '{"region": "${region}"}',
          },
        },
        {
          name: 'second',
          action: {
            __type__: 'api',
            endpoint: `${env.receiver.url}/cron-unset`,
            method: 'POST',
            body: '{"days": ${days}}',
          },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await env.svc.deps.temporal!.client.schedule.getHandle(scheduleId(created.body.id)).trigger();
    let runs: RunView[] = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      runs = (await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${created.body.id}/runs`)).body
        .data;
      if (runs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    const run = await env.waitRun(created.body.id, runs[0]!.id);
    expect(run.status).toBe('failed');
    expect(run.steps!.map((s) => s.status)).toEqual(['succeeded', 'failed']);
    expect(run.error).toBe(
      'step second: needs input days, which this run has no value for: a scheduled run gets none for an input without a default',
    );
    expect(run.inputs).toEqual({ region: 'eu' });
    const sent = env.receiver.requests.filter((r) => r.path === '/cron-unset');
    expect(sent.map((r) => JSON.parse(r.body))).toEqual([{ region: 'eu' }]);
  });

  it('refuses a default of the wrong type, naming the field', async () => {
    const res = await env.api<{ errors: Array<{ path: string }> }>('POST', '/api/v1/workflows', {
      name: 'Bad default',
      inputs: [{ key: 'days', description: '', type: 'integer', default: 'seven' }],
      steps: [],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]!.path).toBe('inputs.0.default');
  });

  it('fires with the defaults, which reach the steps', async () => {
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Nightly report',
      cron_schedule: '0 4 * * *',
      inputs: [
        { key: 'region', description: 'where', type: 'string', default: 'eu' },
        { key: 'days', description: 'how far back', type: 'integer', default: 7 },
      ],
      steps: [
        {
          name: 'ping',
          action: {
            __type__: 'api',
            endpoint: `${env.receiver.url}/cron-inputs`,
            method: 'POST',
            body: '{"region": "${region}", "days": ${days}}',
          },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const before = env.receiver.requests.length;
    await env.svc.deps.temporal!.client.schedule.getHandle(scheduleId(created.body.id)).trigger();
    let runs: RunView[] = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      runs = (await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${created.body.id}/runs`)).body
        .data;
      if (runs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    const run = await env.waitRun(created.body.id, runs[0]!.id);
    expect(run.status, run.error ?? '').toBe('succeeded');
    const sent = env.receiver.requests.slice(before).filter((r) => r.path === '/cron-inputs');
    expect(JSON.parse(sent[0]!.body)).toEqual({ region: 'eu', days: 7 });
  });
});

// SPEC.md 2.1: standard 5-field cron. The editor's preview (nextRuns) and the Temporal Schedule
// must fire at the same times; Temporal's own next action times are the judge.
describe('the preview and the schedule agree', () => {
  it.each([
    '0 12 1 * 1',
    '30 6 1,15 * MON-FRI',
    '0 0 13 * 5',
    '*/20 9-17 * * 1-5',
    '0 3 * * *',
    '15 4 */2 * *',
    '0 0 */3 * 1',
    '0 22 * * 7',
    '0 8 28-31 * *',
    '5/15 * * * *',
    '0 0 1 JAN,JUL *',
    '0 12 29 2 *',
    '0 9 * * SUN,sat',
  ])('%s', async (expr) => {
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: `agree ${expr}`,
      cron_schedule: expr,
      steps: [],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const handle = env.svc.deps.temporal!.client.schedule.getHandle(scheduleId(res.body.id));
    try {
      // Paused: the comparison needs its next times, not its runs.
      await handle.pause('compared with the preview');
      const from = new Date();
      const described = await handle.describe();
      // The preview looks five years ahead (29 February fires once in it).
      const horizon = from.getTime() + 5 * 366 * 86_400_000;
      const temporal = described.info.nextActionTimes
        .filter((d) => d.getTime() < horizon)
        .map((d) => d.toISOString());
      expect(temporal.length).toBeGreaterThan(0);
      const preview = nextRuns(expr, from, temporal.length + 1).map((d) => d.toISOString());
      // A firing between `from` and the describe is in the preview only.
      const offset = preview[0] === temporal[0] ? 0 : 1;
      expect(preview.slice(offset, offset + temporal.length)).toEqual(temporal);
    } finally {
      await env.api('DELETE', `/api/v1/workflows/${res.body.id}`);
    }
  });
});
