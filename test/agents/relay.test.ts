// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningApi, startApi } from '../../api/server.ts';
import type { Deps } from '../../core/deps.ts';
import { findAgent } from '../../store/agents.ts';
import { AgentHub } from '../../tunnels/hub.ts';
import { createAgentAwarePools } from '../../tunnels/pools.ts';
import { RELAY_SESSION_HEADER, relayPath, relayToken } from '../../tunnels/relay-auth.ts';
import { RelayClient } from '../../tunnels/relay-client.ts';
import { AgentRouter } from '../../tunnels/router.ts';
import { servers } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv } from '../workflows/setup.ts';
import {
  type AgentProcess,
  registerAgent,
  registerPostgresBehindAgent,
  startAgentProcess,
  waitConnected,
} from './agent-process.ts';

// agent/README.md "Replicas": an agent holds one tunnel, to the API process `env.svc`. A worker
// in its own process and a second API process reach the database behind it through a relay to
// that holder; TLS verify-full still runs end to end between them and the database.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

let env: WorkflowEnv;
let agent: AgentProcess;
let edge: { id: string; token: string };
let db: { id: string; credentialId: string };
let worker: ChildProcess;
const workerErr: string[] = [];
let second: { api: RunningApi; hub: AgentHub; relay: RelayClient; deps: Deps };

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: false });
  edge = await registerAgent(env.svc, 'edge-relay');
  agent = startAgentProcess(env.svc.url, edge.token);
  await waitConnected(env.svc, edge.id);
  db = await registerPostgresBehindAgent(env.svc, edge.id, 'orders-behind-relay');

  // A second API process on another port, sharing the store and the encryption key. It holds no
  // tunnel: its pools route through the relay, as cli/boot.ts wires every process.
  const { sql, keyring, logger, config } = env.svc.deps;
  const hub = new AgentHub({ sql, logger });
  const relay = new RelayClient({ sql, keyring, logger }, hub.heartbeatMs);
  hub.via = new AgentRouter(hub, relay);
  const deps: Deps = {
    config: { ...config, port: 0 },
    sql,
    keyring,
    logger,
    temporal: null,
    pools: createAgentAwarePools(hub),
    agents: hub,
  };
  second = { api: await startApi(deps), hub, relay, deps };
});

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await second?.api.close();
  await second?.relay.close();
  await second?.hub.close();
  await second?.deps.pools.closeAll();
  await agent?.stop();
  await env?.stop();
});

async function querySecond(statement: string) {
  const res = await fetch(`${second.api.url}/api/v1/desk/query-requests`, {
    method: 'POST',
    headers: { 'x-api-key': env.svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ database_id: db.id, statement, params: [] }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: { rows: unknown[][] }; detail?: string },
  };
}

/** The HTTP status the holder answers a relay upgrade with (101 when it accepts). */
function relayStatus(headers: Record<string, string>): Promise<number> {
  const url = `${env.svc.url.replace(/^http/, 'ws')}${relayPath(edge.id)}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.once('error', reject);
  });
}

describe('agent relay between Countersign processes', () => {
  it('a workflow query step run by a separate worker process reaches the database', async () => {
    const { config } = env.svc.deps;
    const t = servers().temporal;
    worker = spawn(process.execPath, [BIN, 'worker'], {
      // Not process.env: vitest sets BASE_URL=/ and friends there, which are not ours.
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: config.databaseUrl!,
        TEMPORAL_ADDRESS: t.address,
        TEMPORAL_NAMESPACE: config.temporalNamespace,
        TEMPORAL_TASK_QUEUE: config.temporalTaskQueue,
        // The API pins its runs to its deployment version (the sources'); the process may run dist/.
        TEMPORAL_DEPLOYMENT_NAME: config.workerVersioning.deploymentName,
        COUNTERSIGN_BUILD_ID: env.svc.deps.temporal!.version!.buildId,
        COUNTERSIGN_ENCRYPTION_KEY: config.encryptionKey!,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    worker.stderr!.on('data', (c: Buffer) => workerErr.push(c.toString('utf8')));
    const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Lookup through the relay',
      inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: db.credentialId,
            query: 'select ${n}::int * 2 as doubled, ssl from pg_stat_ssl where pid = pg_backend_pid()',
            timeout_seconds: 10,
          },
        },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const runId = await runWorkflow(env, wf.body.id, { n: 21 });
    const run = await env.waitRun(wf.body.id, runId, undefined, 120_000);
    expect(run.status, `${JSON.stringify(run)} ${workerErr.join('')}`).toBe('succeeded');
    expect(run.steps!.find((s) => s.name === 'lookup')!.output).toMatchObject({ rows: [[42, true]] });
    // This API process never ran the step: it has no worker, and the step needed the relay.
    expect(worker.exitCode).toBeNull();
  }, 150_000);

  it('a second API process runs a governed query through the relay, TLS verify-full end to end', async () => {
    expect(second.hub.isConnected(edge.id)).toBe(false);
    const q = await querySecond('select 41 + 1 as n, ssl from pg_stat_ssl where pid = pg_backend_pid()');
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    expect(q.body.result!.rows).toEqual([[42, true]]);
    expect(second.relay.isConnected(edge.id)).toBe(true);
    const check = await fetch(
      `${second.api.url}/api/v1/desk/databases/${db.id}/check-connection/${servers().postgres.user}`,
      { headers: { 'x-api-key': env.svc.apiKey } },
    );
    expect(await check.text()).toBe('ok');
  });

  it('the holder refuses relayed streams to targets not assigned to the agent', async () => {
    const target = { host: '127.0.0.1', port: servers().postgres.port };
    const since = Date.now();
    const local = await second.relay.tunnel(edge.id, target);
    await new Promise<void>((resolve) => {
      const s = connect(local.port, local.host);
      s.on('error', () => {});
      s.on('close', () => resolve());
    });
    expect(second.relay.refusal(edge.id, target, since)).toMatch(
      /127\.0\.0\.1:\d+ is not assigned to this agent/,
    );
  });

  it('refuses a wrong relay token with 401 and a stale session with 409, before the upgrade', async () => {
    const row = await findAgent(env.svc.deps.sql, edge.id);
    const token = relayToken(env.svc.deps.keyring);
    const session = { [RELAY_SESSION_HEADER]: row!.session_id! };
    expect(await relayStatus(session)).toBe(401);
    expect(await relayStatus({ ...session, authorization: `Bearer ${token.slice(0, -2)}xx` })).toBe(401);
    expect(await relayStatus({ ...session, authorization: `Bearer ${env.svc.apiKey}` })).toBe(401);
    expect(await relayStatus({ [RELAY_SESSION_HEADER]: 'stale', authorization: `Bearer ${token}` })).toBe(
      409,
    );
    expect(await relayStatus({ ...session, authorization: `Bearer ${token}` })).toBe(101);
    expect(env.svc.logs.join('')).not.toContain(token);
  });

  it('fails relayed queries at once, naming the agent, when the holder stops or its row is stale', async () => {
    const label = `agent "edge-relay" (${edge.id})`;
    const holderUrl = env.svc.deps.config.internalUrl;
    // A relayed query running when the holder goes away fails then, not at its timeout.
    const running = querySecond('select pg_sleep(20)');
    await new Promise((r) => setTimeout(r, 700));
    const stoppedAt = Date.now();
    await env.svc.api.close();
    const cut = await running;
    expect(cut.status).toBe(422);
    expect(cut.body.detail).toContain(`${label} disconnected`);
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    // The holder writes its disconnect as the tunnel closes; the next query reads that row.
    for (let i = 0; i < 100; i++) {
      const row = await findAgent(env.svc.deps.sql, edge.id);
      if (row?.disconnected_at && row.connected_at && row.disconnected_at >= row.connected_at) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    let started = Date.now();
    const gone = await querySecond('select 1');
    expect(gone.status).toBe(422);
    expect(gone.body.detail).toContain(`${label} is not connected`);
    expect(Date.now() - started).toBeLessThan(3_000);

    // A holder that died without writing its disconnect: the row still looks fresh, nothing listens.
    await env.svc.deps
      .sql`update agents set disconnected_at = null, last_seen_at = now() where id = ${edge.id}`;
    started = Date.now();
    const dead = await querySecond('select 1');
    expect(dead.status).toBe(422);
    expect(dead.body.detail).toContain(
      `${label} is held by the Countersign process at ${holderUrl}, which cannot be reached`,
    );
    expect(Date.now() - started).toBeLessThan(3_000);

    // Once its heartbeat is stale, the row sends nobody anywhere.
    await env.svc.deps
      .sql`update agents set last_seen_at = now() - interval '10 minutes' where id = ${edge.id}`;
    const stale = await querySecond('select 1');
    expect(stale.body.detail).toContain(`${label} is not connected`);
  });
});
