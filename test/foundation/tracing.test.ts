import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { exitCode, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';
import { type Receiver, startReceiver } from '../peers/receiver.ts';

// One trace across the production processes: `countersign serve` and `countersign worker` with
// OTEL_EXPORTER_OTLP_ENDPOINT set to an OTLP/HTTP receiver this test runs on loopback. A workflow
// run with a query step, started through the API with the caller's W3C traceparent, yields serve's
// HTTP and start spans, the worker's workflow and activity spans and the statement's span on the
// real PostgreSQL, all in the caller's trace; the request's log line and the query's audit entry
// name that trace.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
const children: ChildProcess[] = [];
let store: TestStore | undefined;
let otlp: Receiver | undefined;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await store?.drop();
  await otlp?.close();
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string } }[];
}

/** Every span the receiver got, with the service.name of its resource (OTLP JSON encoding). */
function receivedSpans(r: Receiver): (OtlpSpan & { service: string })[] {
  const out: (OtlpSpan & { service: string })[] = [];
  for (const req of r.requests) {
    if (req.path !== '/v1/traces') continue;
    const body = JSON.parse(req.body) as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: OtlpSpan[] }[];
      }[];
    };
    for (const rs of body.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const ss of rs.scopeSpans) for (const s of ss.spans) out.push({ ...s, service });
    }
  }
  return out;
}

const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value.stringValue;

function start(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return { child, out: () => out, err: () => err };
}

describe('tracing', () => {
  it('one trace spans serve, the worker and the statement; the log line and audit entry name it', async () => {
    otlp = await startReceiver();
    store = await createTestStore();
    const t = servers().temporal;
    const pg = servers().postgres;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const apiKey = mintSecret('cskey', newId('key')).secret;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: store.url,
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      TEMPORAL_TASK_QUEUE: `tracing-${port}`,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      COUNTERSIGN_API_KEY: apiKey,
      COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
      COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
      PORT: String(port),
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      // Spans leave within a fifth of a second instead of the default five.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    const api = start(['serve'], env);
    const worker = start(['worker'], env);
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    await until('readiness', async () =>
      (await fetch(`${url}/readyz`)).status === 200 ? true : undefined,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}\nserve: ${api.out()}${api.err()}\nworker: ${worker.out()}${worker.err()}`,
      );
    });

    const db = await fetch(`${url}/api/v1/desk/databases`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'orders',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        credentials: [
          { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        ],
      }),
    });
    expect(db.status).toBe(201);
    const { credentials } = (await db.json()) as { credentials: { id: string }[] };
    const created = await fetch(`${url}/api/v1/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'traced lookup',
        inputs: [],
        steps: [
          {
            name: 'lookup',
            action: { __type__: 'query', credential_id: credentials[0]!.id, query: 'select 7 as seven' },
          },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const wf = (await created.json()) as { id: string };

    // The caller's trace (W3C Trace Context §3.2): the run must join it.
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const ran = await fetch(`${url}/api/v1/workflows/${wf.id}/run`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${traceId}-${callerSpan}-01` },
      body: '{}',
    });
    expect(ran.status, await ran.clone().text()).toBe(200);
    const runId = /run_[0-9A-Z]{26}/.exec(await ran.text())![0];
    const status = await until('the run to finish', async () => {
      const run = (await (
        await fetch(`${url}/api/v1/workflows/${wf.id}/runs/${runId}`, { headers })
      ).json()) as {
        status: string;
      };
      return run.status === 'running' ? undefined : run.status;
    });
    expect(status).toBe('succeeded');

    // Every span below is in the caller's trace, from the process named.
    const spans = await until(
      'the spans of serve, the worker and the statement',
      async () => {
        const all = receivedSpans(otlp!).filter((s) => s.traceId === traceId);
        const statement = all.find((s) => attr(s, 'db.system') === 'postgresql');
        // The workflow's span leaves when the run has ended, through the worker's sink.
        const workflow = all.some((s) => s.name.startsWith('RunWorkflow:'));
        return statement && workflow && all.some((s) => s.name.startsWith('RunActivity:')) ? all : undefined;
      },
      30_000,
    ).catch((err: Error) => {
      const seen = receivedSpans(otlp!).map((s) => `${s.service} ${s.traceId} ${s.name}`);
      throw new Error(`${err.message}; received:\n${seen.join('\n')}\nworker: ${worker.err()}`);
    });
    const named = (service: string, name: string) =>
      spans.find((s) => s.service === service && (s.name === name || s.name.startsWith(name)));
    const http = named('countersign-serve', 'POST /api/v1/workflows/:id/run');
    expect(http?.parentSpanId).toBe(callerSpan);
    expect(named('countersign-serve', 'StartWorkflow:interpretWorkflow')?.parentSpanId).toBe(http?.spanId);
    expect(named('countersign-worker', 'RunWorkflow:interpretWorkflow')).toBeDefined();
    const activity = named('countersign-worker', 'RunActivity:');
    expect(activity).toBeDefined();
    const query = named('countersign-worker', 'governed query');
    for (const step of ['access', 'protection', 'execution', 'audit'])
      expect(named('countersign-worker', `governed query ${step}`), step).toBeDefined();
    const statement = spans.find((s) => attr(s, 'db.system') === 'postgresql')!;
    expect(statement.service).toBe('countersign-worker');
    expect(statement.parentSpanId).toBe(named('countersign-worker', 'governed query execution')?.spanId);
    expect(query).toBeDefined();
    // No statement text or values on any span.
    expect(JSON.stringify(spans)).not.toContain('select 7');

    // serve's log line of the request names the trace.
    const requestLine = api
      .out()
      .split('\n')
      // The first start's announcement is plain text on the terminal; the log is JSON lines.
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && l.route === '/api/v1/workflows/:id/run');
    expect(requestLine?.trace_id).toBe(traceId);

    // The query step's audit entry carries it too, in its hashed subject, and the chain verifies.
    const audit = (await (await fetch(`${url}/api/v1/audit?event=query`, { headers })).json()) as {
      data: { statement: string; subject: { trace_id?: string } | null }[];
    };
    const entry = audit.data.find((e) => e.statement === 'select 7 as seven');
    expect(entry?.subject?.trace_id).toBe(traceId);
    const verify = (await (await fetch(`${url}/api/v1/audit/verify`, { headers })).json()) as { ok: boolean };
    expect(verify.ok).toBe(true);

    worker.child.kill('SIGTERM');
    api.child.kill('SIGTERM');
    expect(await exitCode(worker.child)).toBe(0);
    expect(await exitCode(api.child)).toBe(0);
  }, 240_000);
});
