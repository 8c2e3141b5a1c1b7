// biome-ignore-all lint/suspicious/noTemplateCurlyInString: step bodies are expression-language templates.
// Cron: one Temporal Schedule per workflow in UTC, kept in step with the definition, fired here
// with the schedule's trigger (rather than waiting for the minute), and removed on archive.
import { ScheduleNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('refuses a schedule for a workflow with inputs', async () => {
    const res = await env.api('POST', '/api/v1/workflows', {
      name: 'needs input',
      cron_schedule: '0 * * * *',
      inputs: [{ key: 'x', description: '', type: 'string' }],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors![0]!.path).toBe('cron_schedule');
  });
});

// Issue 16: parameterized jobs are scheduled too — with the defaults of their inputs.
describe('cron with inputs', () => {
  it('refuses a schedule while an input has no default, naming it', async () => {
    const res = await env.api('POST', '/api/v1/workflows', {
      name: 'Nightly report',
      cron_schedule: '0 4 * * *',
      inputs: [
        { key: 'region', description: 'where', type: 'string', default: 'eu' },
        { key: 'days', description: 'how far back', type: 'integer' },
      ],
      steps: [{ name: 'ping', action: { __type__: 'api', endpoint: `${env.receiver.url}/cron-inputs` } }],
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('these have none: days');
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
