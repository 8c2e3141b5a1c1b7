// Payload encryption survives a crash and a key rotation: the worker is killed (SIGKILL) while a
// step is in flight, and its replacement runs with a new key (the old one kept for decoding). The
// run completes; its history holds payloads under both keys; the key-usage report names the open
// runs still holding old-key payloads.
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYLOAD_KEY_INFO } from '../../core/payload-codec.ts';
import { payloadKeyUsage } from '../../core/payload-key-usage.ts';
import { generateKey, Keyring } from '../../store/crypto.ts';
import { servers } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';
import { killWorker, startWorkerProcess } from './worker-child.ts';

let env: WorkflowEnv;
let connection: Connection;
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: false });
  connection = await Connection.connect({ address: servers().temporal.address });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await connection?.close();
  await env?.stop();
});

const keyIdOf = (key: string) => Keyring.fromBase64(key).hkdfKeys(PAYLOAD_KEY_INFO).currentId;

/** The key id of every encrypted payload of a run's history, read without the codec. */
async function historyKeyIds(client: Client, runId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const walk = (node: unknown) => {
    if (typeof node !== 'object' || node === null || node instanceof Uint8Array) return;
    if (Array.isArray(node)) return node.forEach(walk);
    const r = node as Record<string, unknown>;
    const id = (r.metadata as Record<string, Uint8Array> | undefined)?.['encryption-key-id'];
    if (id instanceof Uint8Array) ids.add(Buffer.from(id).toString('utf8'));
    Object.values(r).forEach(walk);
  };
  walk(await client.workflow.getHandle(runId).fetchHistory());
  return ids;
}

describe('a worker killed mid-run and restarted with a rotated key', () => {
  it('completes the run; old payloads decode with the old key, new ones use the new key', async () => {
    let slowCalls = 0;
    let inFlight!: () => void;
    const slowArrived = new Promise<void>((resolve) => {
      inFlight = resolve;
    });
    env.receiver.on('/rot-slow', () => {
      slowCalls++;
      if (slowCalls === 1) {
        inFlight();
        return { status: 200, body: { attempt: 1 }, delayMs: 10_000 };
      }
      return { status: 200, body: { attempt: slowCalls } };
    });
    const create = async (body: Record<string, unknown>) => {
      const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const wf = await create({
      name: 'Rotates mid-run',
      steps: [
        {
          name: 'count',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select 1 as one' },
        },
        {
          name: 'slow',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/rot-slow`, timeout_seconds: 2 },
        },
        { name: 'last', action: { __type__: 'api', endpoint: `${env.receiver.url}/rot-last` } },
      ],
    });
    const waiting = await create({
      name: 'Waits under the old key',
      steps: [{ name: 'sign_off', action: { __type__: 'approval' }, permissions: [{ role: 'admin' }] }],
    });

    const oldKey = env.svc.deps.config.encryptionKey!;
    const newKey = generateKey();
    const first = await startWorkerProcess(env, children);
    const runId = await runWorkflow(env, wf.id);
    const waitingRun = await runWorkflow(env, waiting.id);
    await slowArrived;
    await env.waitRun(waiting.id, waitingRun, (r) => r.status === 'waiting_for_approval', 30_000);
    await killWorker(first);
    await startWorkerProcess(env, children, {
      COUNTERSIGN_ENCRYPTION_KEY: newKey,
      COUNTERSIGN_ENCRYPTION_OLD_KEYS: oldKey,
    });

    const run = await env.waitRun(wf.id, runId, undefined, 60_000);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.steps!.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(slowCalls).toBe(2);

    const raw = new Client({ connection, namespace: env.svc.deps.config.temporalNamespace });
    const ids = await historyKeyIds(raw, runId);
    expect(ids).toEqual(new Set([keyIdOf(oldKey), keyIdOf(newKey)]));

    // The report names the run still waiting with old-key payloads, not the finished one.
    const usage = await payloadKeyUsage(raw, Keyring.fromBase64(newKey, [oldKey]));
    expect(usage.currentKeyId).toBe(keyIdOf(newKey));
    expect(usage.oldKeyRunIds).toContain(waitingRun);
    expect(usage.oldKeyRunIds).not.toContain(runId);
    expect(usage.unknownKeyIds).not.toContain(keyIdOf(oldKey));
    await raw.workflow.getHandle(waitingRun).terminate('test done');
  }, 120_000);
});
