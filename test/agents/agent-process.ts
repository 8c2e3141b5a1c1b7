// A real agent process (`countersign agent`), as a customer would run it, with its JSON log
// lines collected so tests can wait for "connected", "refused" and the like.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { servers } from '../harness/servers.ts';
import type { TestService } from '../helpers/service.ts';

const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

export interface AgentProcess {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  stderr: string[];
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  /** Waits for the n-th log line with `event` (1-based; default the first). */
  waitFor(event: string, n?: number, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** `wrap` runs the agent under another command (`ip netns exec <ns>`). */
export function startAgentProcess(
  server: string,
  token: string,
  args: string[] = [],
  wrap: string[] = [],
): AgentProcess {
  const argv = [process.execPath, BIN, 'agent', '--server', server, ...args];
  const [cmd, ...rest] = [...wrap, ...argv] as [string, ...string[]];
  const child = spawn(cmd, rest, {
    // The token through the environment, as agent/README.md recommends.
    env: { ...process.env, COUNTERSIGN_AGENT_TOKEN: token, DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const stderr: string[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ event: 'unparsed', line });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const waitFor: AgentProcess['waitFor'] = async (event, n = 1, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hits = lines.filter((l) => l.event === event);
      if (hits.length >= n) return hits[n - 1]!;
      if (Date.now() > deadline)
        throw new Error(`agent never logged ${event} #${n}: ${JSON.stringify(lines)} ${stderr.join('')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    child,
    lines,
    stderr,
    exited,
    waitFor,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Registers an agent through the API and returns its id and the token shown once. */
export async function registerAgent(svc: TestService, name: string): Promise<{ id: string; token: string }> {
  const res = await svc.fetch('/api/v1/agents', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`agent registration failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { id: string; token: string };
  return { id: body.id, token: body.token };
}

/** Waits until the service lists the agent with `connected` as wanted. */
export async function waitConnected(svc: TestService, agentId: string, connected = true, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.fetch('/api/v1/agents', { headers: { 'x-api-key': svc.apiKey } });
    const { data } = (await res.json()) as { data: Array<{ id: string; connected: boolean }> };
    const agent = data.find((a) => a.id === agentId);
    if (agent?.connected === connected && svc.deps.agents?.isConnected(agentId) === connected) return agent;
    if (Date.now() > deadline) throw new Error(`agent ${agentId} never became connected=${connected}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Registers the harness PostgreSQL behind `agentId`, with TLS verify-full to its real hostname,
 * through the databases API. Returns the database and its credential.
 */
export async function registerPostgresBehindAgent(
  svc: TestService,
  agentId: string,
  name: string,
): Promise<{ id: string; credentialId: string }> {
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name,
      adapter: 'postgres',
      hostname: pg.tls.rightHostname,
      port: pg.port,
      database: pg.database,
      ssl: true,
      ssl_ca_cert: Buffer.from(pg.tls.caCert).toString('base64'),
      verify_server_hostname: true,
      agent_id: agentId,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    }),
  });
  const body = (await res.json()) as { id: string; credentials: Array<{ id: string }> };
  if (res.status !== 201)
    throw new Error(`registering ${name} failed (${res.status}): ${JSON.stringify(body)}`);
  return { id: body.id, credentialId: body.credentials[0]!.id };
}
