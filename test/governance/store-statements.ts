// Every statement a service's store pool is asked to run — over its connections and over its
// audit connection (store/audit-lane.ts) — with the call stack of the code that asked. postgres.js
// keeps the stack of each query's creation when its handler has `debug` set (postgres/src/query.js
// `origin`); the recorder sets it on the pool, on every transaction begun while it records and on
// the audit connection's client when a batch takes it, and notes each query as it is handed to a
// connection. Nothing is replaced: every query and batch runs as it would have.
import { currentTraceIds, type TraceIds } from '../../core/tracing.ts';
import { auditLaneOf, type Sql } from '../../store/db.ts';

export interface StoreStatement {
  /** The statement's text, placeholders where its values go. */
  text: string;
  /** The stack at the statement's creation, with the awaiting callers ("at async …"). */
  stack: string;
  /** The span active where it was run (tracing on), to tell which walk it belongs to. */
  trace: TraceIds | undefined;
}

/** The parts of postgres.js's Query the recorder reads (postgres/src/query.js). */
interface QueryLike {
  executed: boolean;
  strings: readonly string[];
  handler: { debug?: unknown };
  readonly origin: string;
  handle(): Promise<void>;
}

/** A postgres.js client as far as the recorder marks it. */
interface ClientLike {
  (strings: TemplateStringsArray): unknown;
  options: { debug?: unknown };
}

export interface StoreRecorder {
  /** Records from now on, until `stop`. */
  start(): void;
  /** Stops and returns what was recorded since `start`. */
  stop(): StoreStatement[];
}

const patched = new WeakSet<object>();
const recorders = new Set<(q: QueryLike) => void>();

export function storeRecorder(sql: Sql): StoreRecorder {
  // A query is created lazily and runs only when awaited: this one never is.
  const probe = sql`select 1` as unknown as QueryLike;
  const proto = Object.getPrototypeOf(probe) as QueryLike;
  if (!patched.has(proto)) {
    patched.add(proto);
    const handle = proto.handle;
    proto.handle = function (this: QueryLike) {
      if (!this.executed) for (const r of recorders) r(this);
      return handle.call(this);
    };
  }
  // The value postgres.js copies into each handler's `debug` (the pool's now; a transaction's
  // when it begins): a function, so a connection calls it too, which costs nothing.
  const marker = () => {};
  const options = (sql as unknown as { options: { debug?: unknown } }).options;
  const pool = probe.handler;
  // The audit connection is the pool's second client, made and remade by its lane.
  const lane = auditLaneOf(sql) as unknown as { take(): ClientLike | null } | undefined;
  const laneClients = new Set<{ handler: { debug?: unknown }; options: { debug?: unknown } }>();
  const markLane = (client: ClientLike) => {
    const handler = (client`select 1` as unknown as QueryLike).handler;
    handler.debug = marker;
    client.options.debug = marker;
    laneClients.add({ handler, options: client.options });
  };
  let seen: StoreStatement[] = [];
  let saved: { options: unknown; pool: unknown; limit: number } | null = null;
  const record = (q: QueryLike) => {
    if (q.handler.debug !== marker) return;
    seen.push({ text: q.strings.join('$?'), stack: q.origin, trace: currentTraceIds() });
  };
  return {
    start() {
      saved = { options: options.debug, pool: pool.debug, limit: Error.stackTraceLimit };
      // The whole chain down to the route or activity, not V8's default ten frames.
      Error.stackTraceLimit = 200;
      options.debug = marker;
      pool.debug = marker;
      seen = [];
      recorders.add(record);
      if (lane) {
        const take = Object.getPrototypeOf(lane).take as () => ClientLike | null;
        lane.take = function (this: typeof lane) {
          const client = take.call(this);
          if (client) markLane(client);
          return client;
        };
      }
    },
    stop() {
      recorders.delete(record);
      if (lane) delete (lane as { take?: unknown }).take;
      for (const c of laneClients) {
        c.handler.debug = false;
        c.options.debug = false;
      }
      laneClients.clear();
      if (saved) {
        options.debug = saved.options;
        pool.debug = saved.pool;
        Error.stackTraceLimit = saved.limit;
        saved = null;
      }
      return seen;
    },
  };
}

/** The project's frames of a stack, as paths relative to the checkout (`governance/query.ts`). */
export function projectFrames(stack: string, root: string): string[] {
  const out: string[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const at = line.indexOf(root);
    if (at < 0) continue;
    const rest = line.slice(at + root.length).replace(/^\//, '');
    const file = rest.replace(/:\d+(:\d+)?\)?$/, '');
    if (file.startsWith('node_modules/')) continue;
    out.push(file);
  }
  return out;
}
