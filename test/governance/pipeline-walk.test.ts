// Walks of one statement through each door that runs queries — the REST query route, MCP
// `tools/call run_query` (both protocol revisions), a workflow run's query step — on one service
// with its real store, PostgreSQL target and Temporal worker. Each walk must enter the governed
// pipeline exactly once (one "governed query" span in the walk's trace with one execution and one
// statement on the target below it, and one `query` audit entry), and the store must hear from
// nobody but governance/ and the few origins named below while it runs (DESIGN.md "The governed
// query pipeline": no decision about a query is made elsewhere).
//
// How: tracing is on in this process, its spans sent to an OTLP receiver on loopback, and every
// statement the service's store pool and its audit connection receive is recorded with the stack
// of the code that created it (test/governance/store-statements.ts). A walk's statements are those
// run in its trace (for the workflow, under its query step's activities): a statement run where
// no trace context reaches would escape a walk, which the AsyncLocalStorage context manager makes
// unlikely (the audit writer's batches keep it). A statement's issuer is the first frame of the
// project outside store/ (the code that called the store function), or, when the stack holds only
// store frames, the outermost of them.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, stopTracing } from '../../core/tracing.ts';
import { credentialTarget } from '../../governance/access.ts';
import { findUserById } from '../../store/users.ts';
import { type RunningWorker, startWorker } from '../../worker/worker.ts';
import { servers, workflowBundle } from '../harness/servers.ts';
import { connect } from '../oauth/flow.ts';
import { type Receiver, startReceiver } from '../peers/receiver.ts';
import { projectFrames, type StoreRecorder, type StoreStatement, storeRecorder } from './store-statements.ts';
import { type AuditJson, eventually, json, type Person, startWorld, type World } from './world.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

/** Who may send the store a statement during a walk besides governance/, each with why. */
const ALLOWED: Record<string, string> = {
  'governance/': 'the governed pipeline: access, protection, review gate, execution, its access cache reads',
  'identity/authenticate.ts': 'authenticating the REST caller (personal token, API key or session)',
  'identity/oauth-access.ts': 'the grant behind an MCP OAuth access token (RFC 9068 §4 validation)',
  'identity/usage.ts': "noting a credential's last use, at most once a minute",
  'audit/events.ts': 'the audit append of the attempt, in the pipeline or the transaction it records',
  'store/audit-writer.ts':
    'the audit append sent in a batch: a batch is sent by the writer, so its stack begins there',
};

let w: World;
let otlp: Receiver;
let worker: RunningWorker;
let rec: StoreRecorder;
let admin: Person;
let mcpToken: string;

beforeAll(async () => {
  otlp = await startReceiver();
  // The SDK reads these when it starts: spans leave for the receiver within a fifth of a second.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
  // Before the service, so its HTTP spans and Temporal client and worker interceptors are on.
  expect(await startTracing('serve')).toBe(true);
  w = await startWorld({ temporal: true });
  worker = await startWorker(w.svc.deps, servers().temporal.address, { workflowBundle: workflowBundle() });
  admin = await w.person('admin', 'walker');
  mcpToken = (await connect(w.svc, w.svc.admin)).tokens.access_token;
  rec = storeRecorder(w.svc.deps.sql);
});
afterAll(async () => {
  rec?.stop();
  await worker?.shutdown();
  await w?.stop();
  await stopTracing();
  await otlp?.close();
});

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** Every span the receiver got (OTLP/HTTP JSON encoding). */
function receivedSpans(): Span[] {
  const out: Span[] = [];
  for (const req of otlp.requests) {
    if (req.path !== '/v1/traces') continue;
    const body = JSON.parse(req.body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
    for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) out.push(...ss.spans);
  }
  return out;
}

/** The code that asked for a statement (see the top of the file). */
function issuer(s: StoreStatement): string {
  const frames = projectFrames(s.stack, ROOT);
  return frames.find((f) => !f.startsWith('store/')) ?? frames.at(-1) ?? '(no frame of the project)';
}

const allowed = (file: string) => Object.keys(ALLOWED).some((origin) => file.startsWith(origin));

/** The statements of a walk whose issuer is not allowed, with their stacks, for the failure message. */
function outOfPlace(statements: StoreStatement[]): string[] {
  return statements
    .filter((s) => !allowed(issuer(s)))
    .map(
      (s) =>
        `${issuer(s)}: ${s.text.replace(/\s+/g, ' ').trim()}\n${projectFrames(s.stack, ROOT).join('\n  < ')}`,
    );
}

interface Walk {
  traceId: string;
  spans: Span[];
  /** Every statement the store pool received in the walk's trace. */
  statements: StoreStatement[];
}

/**
 * Runs `fn` with a fresh W3C traceparent (trace-context §3.2) while recording the store, then waits
 * until the receiver has every span a statement of the trace ran in, and `ready` holds.
 */
async function walk(
  fn: (traceparent: Record<string, string>) => Promise<void>,
  ready: (spans: Span[]) => boolean,
): Promise<Walk> {
  const traceId = randomBytes(16).toString('hex');
  const traceparent = { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  rec.start();
  let recorded: StoreStatement[];
  try {
    await fn(traceparent);
  } finally {
    recorded = rec.stop();
  }
  const statements = recorded.filter((s) => s.trace?.trace_id === traceId);
  const spans = await eventually(() => {
    const inTrace = receivedSpans().filter((s) => s.traceId === traceId);
    const ids = new Set(inTrace.map((s) => s.spanId));
    return ready(inTrace) && statements.every((s) => ids.has(s.trace!.span_id)) ? inTrace : undefined;
  }, 20_000);
  return { traceId, spans, statements };
}

/** Whether `span` is `root` or one of its descendants. */
function under(spans: Span[], spanId: string, root: (s: Span) => boolean): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let s = byId.get(spanId); s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
    if (root(s)) return true;
  return false;
}

/**
 * The pipeline entered exactly once, below the walk's door: one span of runGovernedQuery, one of
 * executeGoverned inside it, and one statement on the target database inside that.
 */
function enteredOnce(walked: Walk, door: (s: Span) => boolean): void {
  const named = (name: string) => walked.spans.filter((s) => s.name === name);
  const [entry, ...more] = named('governed query');
  expect(entry && more.length === 0, 'one "governed query" span').toBe(true);
  expect(under(walked.spans, entry!.spanId, door)).toBe(true);
  const [execution, ...executions] = named('governed query execution');
  expect(execution && executions.length === 0, 'one "governed query execution" span').toBe(true);
  expect(execution!.parentSpanId).toBe(entry!.spanId);
  const [target, ...targets] = named('postgresql');
  expect(target && targets.length === 0, 'one statement on the target').toBe(true);
  expect(target!.parentSpanId).toBe(execution!.spanId);
}

/** The statement's `query` audit entries, read through the audit route. */
async function auditedQueries(statement: string): Promise<AuditJson[]> {
  const res = await w.as(
    'key',
    'GET',
    `/api/v1/audit?event=query&limit=500&q=${encodeURIComponent(statement)}`,
  );
  expect(res.status).toBe(200);
  const { data } = await json<{ data: AuditJson[] }>(res);
  return data.filter((e) => e.statement === statement);
}

/**
 * What every walk must show of the store: statements seen, governance's and the audit append's
 * among them (so the recorder saw the pool and the audit connection), and nobody else's.
 */
function storeHeardOnlyGovernance(statements: StoreStatement[]): void {
  expect(statements.some((s) => issuer(s).startsWith('governance/'))).toBe(true);
  expect(statements.some((s) => /^(audit\/|store\/audit-writer\.ts)/.test(issuer(s)))).toBe(true);
  expect(outOfPlace(statements)).toEqual([]);
}

const marker = () => randomBytes(4).toString('hex');

/**
 * A database of its own for each walk. Registering it changes access rows, which empties the
 * access cache (store/access-cache.ts): the walk reads its decisions from the store, not memory.
 */
const freshDatabase = () => w.database('postgres', { ai_enabled: true }, 0, { ai_allowed: true });

describe('a governed query walks through governance/ once, and the store hears from no one else', () => {
  it('REST: POST /api/v1/desk/query-requests', async () => {
    const db = await freshDatabase();
    const statement = `select count(*)::int as n, 'rest-${marker()}' as walk from ${w.table}`;
    const walked = await walk(
      async (traceparent) => {
        const res = await w.as(
          admin,
          'POST',
          '/api/v1/desk/query-requests',
          { database_id: db.id, statement },
          traceparent,
        );
        expect(res.status, await res.clone().text()).toBe(200);
        expect((await json<{ status: string }>(res)).status).toBe('executed');
      },
      (spans) => spans.some((s) => s.name === 'governed query'),
    );
    enteredOnce(walked, (s) => s.name === 'POST /api/v1/desk/query-requests');
    expect((await auditedQueries(statement)).map((e) => [e.outcome, e.origin])).toEqual([
      ['allowed', 'user'],
    ]);
    storeHeardOnlyGovernance(walked.statements);
    // The caller's authentication is the only other reader, and it is seen.
    expect(walked.statements.some((s) => issuer(s) === 'identity/authenticate.ts')).toBe(true);
  });

  // Plain calls of either revision are answered without the SDK (api/mcp/tool-call.ts); one whose
  // envelope asks for a log level goes through it: every road is walked.
  const roads = [
    { revision: '2025-11-25', label: '2025-11-25', meta: {} },
    { revision: '2026-07-28', label: '2026-07-28', meta: {} },
    {
      revision: '2026-07-28',
      label: '2026-07-28, served by the SDK',
      meta: { 'io.modelcontextprotocol/logLevel': 'info' },
    },
  ] as const;
  for (const { revision, label, meta } of roads) {
    it(`MCP: tools/call run_query (${label})`, async () => {
      const db = await freshDatabase();
      const statement = `select count(*)::int as n, 'mcp-${marker()}' as walk from ${w.table}`;
      const args = { name: 'run_query', arguments: { database_id: db.id, sql: statement } };
      const modern = revision === '2026-07-28';
      const walked = await walk(
        async (traceparent) => {
          const res = await w.svc.fetch('/mcp', {
            method: 'POST',
            headers: {
              authorization: `Bearer ${mcpToken}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': revision,
              ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'run_query' } : {}),
              ...traceparent,
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: modern
                ? {
                    ...args,
                    _meta: {
                      'io.modelcontextprotocol/protocolVersion': revision,
                      'io.modelcontextprotocol/clientCapabilities': {},
                      ...meta,
                    },
                  }
                : args,
            }),
          });
          expect(res.status).toBe(200);
          const body = await json<{ result?: { structuredContent?: { status: string; rows: unknown[][] } } }>(
            res,
          );
          expect(body.result?.structuredContent, JSON.stringify(body)).toMatchObject({ status: 'executed' });
        },
        (spans) => spans.some((s) => s.name === 'governed query'),
      );
      enteredOnce(walked, (s) => s.name === 'POST /mcp');
      expect((await auditedQueries(statement)).map((e) => [e.outcome, e.origin])).toEqual([
        ['allowed', 'ai'],
      ]);
      storeHeardOnlyGovernance(walked.statements);
      expect(walked.statements.some((s) => issuer(s) === 'identity/oauth-access.ts')).toBe(true);
    });
  }

  it('workflow: a run whose query step runs one statement', async () => {
    const db = await freshDatabase();
    const statement = `select count(*)::int as n, 'workflow-${marker()}' as walk from ${w.table}`;
    const created = await w.as(admin, 'POST', '/api/v1/workflows', {
      name: `walk ${marker()}`,
      inputs: [],
      steps: [
        {
          name: 'lookup',
          action: { __type__: 'query', credential_id: db.credentials[0]!.id, query: statement },
        },
      ],
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const wf = await json<{ id: string }>(created);
    // The step's activities: planning it (its credential's database and timeout) and running it.
    const stepActivity = (s: Span) =>
      s.name === 'RunActivity:planQueryStep' || s.name === 'RunActivity:runQueryStep';
    const walked = await walk(
      async (traceparent) => {
        // Started by a person: the step runs as them, so who they are now is read too.
        const ran = await w.as(admin, 'POST', `/api/v1/workflows/${wf.id}/run`, {}, traceparent);
        expect(ran.status, await ran.clone().text()).toBe(200);
        const runId = /run_[0-9A-Z]{26}/.exec(await ran.text())![0];
        const status = await eventually(async () => {
          const run = await json<{ status: string }>(
            await w.as(admin, 'GET', `/api/v1/workflows/${wf.id}/runs/${runId}`),
          );
          return run.status === 'running' ? undefined : run.status;
        }, 30_000);
        expect(status).toBe('succeeded');
      },
      (spans) =>
        ['RunActivity:planQueryStep', 'RunActivity:runQueryStep', 'governed query'].every((n) =>
          spans.some((s) => s.name === n),
        ),
    );
    enteredOnce(walked, (s) => s.name === 'RunActivity:runQueryStep');
    expect((await auditedQueries(statement)).map((e) => [e.outcome, e.origin])).toEqual([
      ['allowed', 'workflow'],
    ]);
    const step = walked.statements.filter((s) => under(walked.spans, s.trace!.span_id, stepActivity));
    storeHeardOnlyGovernance(step);
    // Both activities asked the store something, through governance.
    for (const name of ['RunActivity:planQueryStep', 'RunActivity:runQueryStep'])
      expect(
        step.some((s) => under(walked.spans, s.trace!.span_id, (x) => x.name === name)),
        name,
      ).toBe(true);
  });

  it('the check flags a store read made outside governance/, and passes the same read made through it', async () => {
    const db = await freshDatabase();
    rec.start();
    let recorded: StoreStatement[];
    try {
      await findUserById(w.svc.deps.sql, admin.id);
      await credentialTarget(w.svc.deps.sql, w.orgId, db.credentials[0]!.id);
    } finally {
      recorded = rec.stop();
    }
    expect(recorded.map(issuer)).toEqual(['test/governance/pipeline-walk.test.ts', 'governance/access.ts']);
    const flagged = outOfPlace(recorded);
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toMatch(/^test\/governance\/pipeline-walk\.test\.ts: select \* from users/);
  });
});
