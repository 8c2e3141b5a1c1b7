// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// The tracker label trigger: label resolution through the tracker's API, verified webhooks,
// inputs from `#### <input>` headings, and exactly one run per delivery however often it comes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunView, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let env: WorkflowEnv;
let wf: WorkflowView;
beforeAll(async () => {
  env = await startWorkflowEnv();
  const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
    name: 'Fix from tracker',
    trigger_tracker_label: { name: 'needs db fix' },
    inputs: [
      { key: 'ticket', description: 'Ticket', type: 'string' },
      { key: 'amount', description: 'Amount', type: 'integer' },
    ],
    steps: [
      {
        name: 'record',
        action: {
          __type__: 'api',
          endpoint: `${env.receiver.url}/tracker`,
          method: 'POST',
          body: '{"ticket": "${ticket}", "amount": "${amount}"}',
        },
      },
    ],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  wf = res.body;
});
afterAll(async () => env?.stop());

const LABEL = 'a1c5e0d2-0000-4000-8000-000000000001';
const OTHER = 'a1c5e0d2-0000-4000-8000-000000000002';
const description = 'Please fix.\n\n#### ticket\nSUP-42\n\n#### amount\n 250 \n\nThanks';

function issue(action: string, labelIds: string[], before?: string[]) {
  return {
    action,
    type: 'Issue',
    data: { id: 'iss-1', identifier: 'ENG-1', description, labelIds },
    ...(before ? { updatedFrom: { labelIds: before } } : {}),
  };
}

async function deliver(d: { body: string; headers: Record<string, string> }) {
  const res = await env.svc.fetch('/api/v1/integrations/tracker/webhook', { method: 'POST', ...d });
  return { status: res.status, body: (await res.json()) as { runs?: string[] } };
}

async function runs(): Promise<RunView[]> {
  return (await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${wf.id}/runs`)).body.data;
}

describe('tracker label trigger', () => {
  it('resolves the label id through the tracker API on create', () => {
    expect(wf.trigger_tracker_label).toEqual({ id: LABEL, name: 'Needs DB fix' });
  });

  it('refuses an unknown label with a 422', async () => {
    const res = await env.api('POST', '/api/v1/workflows', {
      name: 'x',
      trigger_tracker_label: { name: 'nope' },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors![0]!.path).toBe('trigger_tracker_label.name');
  });

  it('refuses a delivery with a bad signature and starts nothing', async () => {
    const forged = env.tracker.delivery(issue('update', [LABEL], []), { secret: 'not-the-secret' });
    expect((await deliver(forged)).status).toBe(401);
    const unsigned = env.tracker.delivery(issue('update', [LABEL], []));
    delete unsigned.headers['linear-signature'];
    expect((await deliver(unsigned)).status).toBe(401);
    expect(await runs()).toEqual([]);
  });

  it('refuses a correctly signed but stale delivery', async () => {
    const stale = env.tracker.delivery({
      ...issue('update', [LABEL], []),
      webhookTimestamp: Date.now() - 5 * 60_000,
    });
    expect((await deliver(stale)).status).toBe(401);
    expect(await runs()).toEqual([]);
  });

  it('ignores events where the label was not just added', async () => {
    expect((await deliver(env.tracker.delivery(issue('update', [LABEL, OTHER], [LABEL])))).body.runs).toEqual(
      [],
    );
    expect((await deliver(env.tracker.delivery(issue('update', [OTHER], [])))).body.runs).toEqual([]);
    expect(await runs()).toEqual([]);
  });

  it('starts exactly one run with the parsed inputs, however often the delivery comes', async () => {
    const d = env.tracker.delivery(issue('update', [OTHER, LABEL], [OTHER]), { deliveryId: 'dlv-1' });
    const answers = await Promise.all([deliver(d), deliver(d), deliver(d)]);
    const again = await deliver(d);
    const ids = new Set([...answers, again].flatMap((a) => a.body.runs ?? []));
    expect(ids.size).toBe(1);
    const all = await runs();
    expect(all).toHaveLength(1);
    const run = await env.waitRun(wf.id, all[0]!.id);
    expect(run).toMatchObject({
      status: 'succeeded',
      trigger: 'tracker',
      inputs: { ticket: 'SUP-42', amount: 250 },
    });
    const received = env.receiver.requests.filter((r) => r.path === '/tracker');
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual({ ticket: 'SUP-42', amount: 250 });
    // One start on the audit log however often it came: by the run itself, input keys only.
    const events = await env.svc.deps.sql<{ actor_kind: string; origin: string; subject: object }[]>`
      select actor_kind, origin, subject from audit_log
      where event = 'run.started' and subject->>'run_id' = ${all[0]!.id}`;
    expect(events).toEqual([
      {
        actor_kind: 'workflow_run',
        origin: 'workflow',
        subject: expect.objectContaining({
          trigger: 'tracker',
          input_keys: ['ticket', 'amount'],
          delivery_id: 'dlv-1',
        }),
      },
    ]);
    expect(JSON.stringify(events)).not.toContain('SUP-42');
  });
});
