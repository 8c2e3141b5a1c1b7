import { execFile } from 'node:child_process';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionConfig } from '../../adapters/types.ts';
import { AgentHub } from '../../tunnels/hub.ts';
import { routedAdapterFor } from '../../tunnels/pools.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type AgentProcess, registerAgent, startAgentProcess, waitConnected } from './agent-process.ts';

// A real agent process relays PostgreSQL and MariaDB (TLS verify-full against the real
// hostname) for the service. The service never dials these databases itself: for a database
// with agent_id the tunnel is its only path (tunnels/pools.ts), which the "not
// connected" cases below show with the servers still up.
let svc: TestService;
let edge: { id: string; token: string };
let agent: AgentProcess;
const dbs: Record<'postgres' | 'mariadb', { id: string; username: string }> = {} as never;

const b64 = (pem: string) => Buffer.from(pem).toString('base64');
const headers = () => ({ 'x-api-key': svc.apiKey, 'content-type': 'application/json' });

async function registerDb(engine: 'postgres' | 'mariadb', extra: Record<string, unknown> = {}) {
  const s = servers()[engine];
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      name: `${engine}-behind-edge`,
      adapter: engine === 'postgres' ? 'postgres' : 'mysql',
      hostname: s.tls.rightHostname,
      port: s.port,
      database: s.database,
      ssl: true,
      ssl_ca_cert: b64(s.tls.caCert),
      verify_server_hostname: true,
      agent_id: edge.id,
      credentials: [{ username: s.user, password: s.password }],
      ...extra,
    }),
  });
  const body = (await res.json()) as Record<string, unknown> & { id: string };
  return { status: res.status, body };
}

const checkConnection = async (engine: 'postgres' | 'mariadb') => {
  const { id, username } = dbs[engine];
  const res = await svc.fetch(`/api/v1/desk/databases/${id}/check-connection/${username}`, {
    headers: headers(),
  });
  expect(res.status).toBe(200);
  return res.text();
};

async function query(engine: 'postgres' | 'mariadb', statement: string, params: unknown[] = []) {
  const res = await svc.fetch('/api/v1/desk/query-requests', {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ database_id: dbs[engine].id, statement, params }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { result?: { rows: unknown[][] }; detail?: string },
  };
}

beforeAll(async () => {
  svc = await startTestService({ agentHeartbeatMs: 500 });
  edge = await registerAgent(svc, 'edge-1');
  agent = startAgentProcess(svc.url, edge.token);
  await agent.waitFor('connected');
  for (const engine of ['postgres', 'mariadb'] as const) {
    const { status, body } = await registerDb(engine);
    expect(status, JSON.stringify(body)).toBe(201);
    dbs[engine] = { id: body.id, username: servers()[engine].user };
  }
});
afterAll(async () => {
  await agent?.stop();
  await svc?.stop();
});

describe('databases behind an agent', () => {
  it('report the agent status on the database and in the agents list', async () => {
    await waitConnected(svc, edge.id);
    const res = await svc.fetch(`/api/v1/desk/databases/${dbs.postgres.id}`, { headers: headers() });
    const db = (await res.json()) as { agent_id: string; agent: Record<string, unknown> };
    expect(db.agent_id).toBe(edge.id);
    expect(db.agent).toMatchObject({
      id: edge.id,
      name: 'edge-1',
      connected: true,
      version: '0.1.0',
      revoked: false,
    });
    expect(Date.parse(String(db.agent.last_seen_at))).toBeGreaterThan(Date.now() - 60_000);
  });

  for (const engine of ['postgres', 'mariadb'] as const) {
    it(`check-connection to ${engine} goes through the agent with SSL verify-full`, async () => {
      expect(await checkConnection(engine)).toBe('ok');
    });
  }

  it('runs governed queries through the agent, over TLS to the database', async () => {
    const pg = await query(
      'postgres',
      'select $1::int + 1 as n, ssl from pg_stat_ssl where pid = pg_backend_pid()',
      [41],
    );
    expect(pg.status, JSON.stringify(pg.body)).toBe(200);
    expect(pg.body.result!.rows).toEqual([[42, true]]);
    const maria = await query(
      'mariadb',
      "select ? + 1 as n, variable_value <> '' as tls from information_schema.session_status where variable_name = 'Ssl_cipher'",
      [41],
    );
    expect(maria.status, JSON.stringify(maria.body)).toBe(200);
    expect(maria.body.result!.rows.map((r) => r.map(Number))).toEqual([[42, 1]]);
  });

  it('verifies the configured hostname through the tunnel, not the loopback address it dials', async () => {
    // The certificate names only `localhost`; verify-full to the IP must fail even though the
    // TCP path (agent, tunnel) is the same one that works above.
    const s = servers().postgres;
    const { status, body } = await registerDb('postgres', {
      name: 'pg-by-ip',
      hostname: s.tls.wrongHostname,
    });
    expect(status).toBe(201);
    const res = await svc.fetch(`/api/v1/desk/databases/${body.id}/check-connection/${s.user}`, {
      headers: headers(),
    });
    const answer = await res.text();
    expect(answer).not.toBe('ok');
    expect(answer.toLowerCase()).toMatch(/certificate|altnames|hostname/);
  });

  it('another process without the tunnel (a separate worker, another replica) says where the agent is', async () => {
    // A second hub on the same store stands for that process: the agent is connected, not to it.
    const elsewhere = new AgentHub({ sql: svc.deps.sql, logger: svc.deps.logger });
    const s = servers().postgres;
    const pool = routedAdapterFor('postgres', elsewhere).connect({
      adapter: 'postgres',
      hostname: s.tls.rightHostname,
      port: s.port,
      database: s.database,
      username: s.user,
      password: s.password,
      ssl: {
        enabled: true,
        caCert: s.tls.caCert,
        verifyServerHostname: true,
        clientCert: null,
        clientKey: null,
      },
      timeoutSeconds: 5,
      agentId: edge.id,
    } as ConnectionConfig);
    await expect(pool.check()).rejects.toThrow(
      `agent "edge-1" (${edge.id}) is connected to another Countersign process, not this one`,
    );
    await pool.close();
    await elsewhere.close();
  });

  it('refuses an agent_id that names no agent of the organization (422 naming agent_id)', async () => {
    const { status, body } = await registerDb('postgres', { agent_id: 'agt_01JZZZZZZZZZZZZZZZZZZZZZZZ' });
    expect(status).toBe(422);
    expect(body.errors).toEqual([expect.objectContaining({ path: 'agent_id' })]);
    const patch = await svc.fetch(`/api/v1/desk/databases/${dbs.postgres.id}`, {
      method: 'PATCH',
      headers: headers(),
      body: JSON.stringify({ agent_id: 'edge-1' }),
    });
    expect(patch.status).toBe(422);
    expect(((await patch.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('agent_id');
  });
});

describe('the agent guards its network', () => {
  it('refuses a stream to a host and port not assigned to it', async () => {
    // The service's own pools only ask for assigned targets; here the hub is asked directly,
    // as a compromised service could, and the agent process says no.
    const socket = new Socket();
    const ch = servers().clickhouse;
    await expect(
      svc.deps.agents!.openStream(edge.id, { host: ch.host, port: ch.httpPort }, socket),
    ).rejects.toThrow(
      `refused by agent "edge-1" (${edge.id}): ${ch.host}:${ch.httpPort} is not assigned to this agent`,
    );
    expect(agent.lines).toContainEqual(expect.objectContaining({ event: 'refused', port: ch.httpPort }));
  });

  it('refuses a wrong token: the agent stops with exit code 3', async () => {
    const forged = `${edge.token.slice(0, -5)}AAAAA`;
    for (const token of [forged, 'not-a-token']) {
      const bad = startAgentProcess(svc.url, token);
      expect(await bad.exited).toBe(3);
      expect(bad.stderr.join('')).toContain('refused the agent token');
    }
    expect(svc.logs.some((l) => l.includes('agent tunnel refused'))).toBe(true);
    expect(svc.logs.some((l) => l.includes(edge.token))).toBe(false);
  });

  it('a revoked agent is cut off at once and cannot come back', async () => {
    const other = await registerAgent(svc, 'edge-2');
    const proc = startAgentProcess(svc.url, other.token);
    await proc.waitFor('connected');
    const res = await svc.fetch(`/api/v1/agents/${other.id}`, { method: 'DELETE', headers: headers() });
    expect(res.status).toBe(204);
    expect(await proc.exited).toBe(3);
    const again = startAgentProcess(svc.url, other.token);
    expect(await again.exited).toBe(3);
    const list = await svc.fetch('/api/v1/agents', { headers: headers() });
    const { data } = (await list.json()) as {
      data: Array<{ id: string; revoked: boolean; connected: boolean }>;
    };
    expect(data.find((a) => a.id === other.id)).toMatchObject({ revoked: true, connected: false });
  });
});

describe('the command line', () => {
  const cli = (...args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [fileURLToPath(new URL('../../bin/countersign.js', import.meta.url)), 'agent', ...args],
      {
        env: { ...process.env, DATABASE_URL: svc.deps.config.databaseUrl!, BASE_URL: svc.url },
      },
    );

  it('registers an agent (token printed once), lists it, and revokes it', async () => {
    const created = await cli('register', '--name', 'cli-edge');
    const [, id, token] = /^created (agt_\w+) \(cli-edge\)\n(csagent_\S+)\n$/.exec(created.stdout) ?? [];
    expect(id, created.stdout).toBeDefined();
    const proc = startAgentProcess(svc.url, token!);
    await waitConnected(svc, id!);
    expect((await cli('list')).stdout).toMatch(
      new RegExp(`${id} cli-edge connected last seen \\S+ version 0\\.1\\.0`),
    );
    expect((await cli('revoke', '--id', id!)).stdout).toBe(`revoked ${id}\n`);
    expect(await proc.exited).toBe(3);
    await expect(cli('revoke', '--id', id!)).rejects.toMatchObject({
      stderr: expect.stringContaining('no live agent'),
    });
  });
});

describe('when the agent goes away', () => {
  it('fails a query at once, naming the agent, while the database itself is up', async () => {
    await agent.stop();
    await waitConnected(svc, edge.id, false);
    const t0 = performance.now();
    const q = await query('postgres', 'select 1');
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(q.status).toBe(422);
    expect(q.body.detail).toContain(`agent "edge-1" (${edge.id}) is not connected`);
    expect(await checkConnection('mariadb')).toBe(`agent "edge-1" (${edge.id}) is not connected`);
    agent = startAgentProcess(svc.url, edge.token);
    await waitConnected(svc, edge.id);
  });

  it('killing the agent mid-query fails that query clearly; the next one succeeds once it is back', async () => {
    expect((await query('postgres', 'select 1')).status).toBe(200);
    const slow = query('postgres', 'select pg_sleep(5)');
    await new Promise((r) => setTimeout(r, 500));
    agent.child.kill('SIGKILL');
    const failed = await slow;
    expect(failed.status).toBe(422);
    expect(failed.body.detail).toContain(`agent "edge-1" (${edge.id}) disconnected`);
    // A supervisor (systemd, Docker restart policy) starts it again.
    agent = startAgentProcess(svc.url, edge.token);
    await waitConnected(svc, edge.id);
    const next = await query('postgres', 'select 2 as n');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.result!.rows).toEqual([[2]]);
  });

  it('after a dropped tunnel the same agent process reconnects (backoff) and queries work again', async () => {
    const slow = query('mariadb', 'select sleep(5)');
    await new Promise((r) => setTimeout(r, 500));
    svc.deps.agents!.disconnect(edge.id, 1006, 'network drop');
    const failed = await slow;
    expect(failed.status).toBe(422);
    expect(failed.body.detail).toContain(`agent "edge-1" (${edge.id}) disconnected`);
    await agent.waitFor('reconnecting');
    await agent.waitFor('connected', 2);
    await waitConnected(svc, edge.id);
    const next = await query('mariadb', 'select 3 as n');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.result!.rows.map((r) => r.map(Number))).toEqual([[3]]);
  });

  it('SIGTERM drains: a running query finishes, new ones are refused, then the agent exits 0', async () => {
    expect((await query('postgres', 'select 1')).status).toBe(200);
    const running = query('postgres', 'select pg_sleep(1.5), 7 as n');
    await new Promise((r) => setTimeout(r, 300));
    agent.child.kill('SIGTERM');
    await agent.waitFor('draining');
    await new Promise((r) => setTimeout(r, 100));
    const refused = await query('mariadb', 'select 1');
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/agent "edge-1" .* (is shutting down|is not connected)/);
    const done = await running;
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.result!.rows[0]![1]).toBe(7);
    expect(await agent.exited).toBe(0);
    expect(agent.lines.map((l) => l.event)).toContain('stopped');
  });
});
