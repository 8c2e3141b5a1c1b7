// PostgreSQL through postgres.js. One statement per call over the extended protocol, with the
// user's values as bind parameters; rows read through a portal with a row limit, so a capped
// query never transfers more than maxRows + 1 rows.
import postgres from 'postgres';
import { guardedConnect } from './connect.ts';
import { secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { Lender } from './lender.ts';
import { postgresSsl } from './ssl.ts';
import type {
  Adapter,
  AdapterPool,
  ConnectionConfig,
  ExecuteOptions,
  ParamValue,
  QueryResult,
  SchemaTable,
} from './types.ts';
import {
  checkExecuteOptions,
  checkStatement,
  groupSchema,
  RowCollector,
  reusableAfter,
  type SchemaRow,
} from './values.ts';

const POOL_SIZE = 5;
const IDLE_SECONDS = 60;
/** Past the time limit, how long the server may take to stop the statement before its connection is cut. */
const CUT_GRACE_MS = 5_000;
/** SQLSTATE query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = '57014';

// Dates and times as the server wrote them, in ISO 8601 shape, rather than postgres.js's Dates:
// `date` and `timestamp` carry no zone (a Date would invent one, and lose microseconds);
// `timestamptz` is an instant, written in UTC. Bytes are base64 (README "Value mapping").
const isoInstant = (x: string): string => {
  const d = new Date(x);
  return Number.isNaN(d.getTime()) ? x : d.toISOString(); // 'infinity' stays as written
};
const toText = (x: unknown): string => (x instanceof Date ? x.toISOString() : String(x));
const TYPES = {
  isoDate: { to: 1082, from: [1082], serialize: toText, parse: (x: string) => x },
  isoTimestamp: { to: 1114, from: [1114], serialize: toText, parse: (x: string) => x.replace(' ', 'T') },
  isoTimestamptz: { to: 1184, from: [1184], serialize: toText, parse: isoInstant },
  base64Bytea: {
    to: 17,
    from: [17],
    serialize: (x: Uint8Array | string) =>
      typeof x === 'string' ? x : `\\x${Buffer.from(x).toString('hex')}`,
    parse: (x: string) => Buffer.from(x.slice(2), 'hex').toString('base64'),
  },
};

/** What postgres.js resolves a raw (`.values()`) query with; its typings leave these out. */
interface PgResult extends Array<unknown[]> {
  command: string | null;
  count: number | null;
  columns?: Array<{ name: string; table: number; number: number }> | null;
}

/** One single-connection client and the notices of the statement it is running. */
class Slot {
  notices: string[] | null = null;
  /** The session's statement_timeout in ms: the startup value again whenever postgres.js reconnects. */
  timeoutMs: number;
  readonly sql: postgres.Sql;
  constructor(options: postgres.Options<Record<string, postgres.PostgresType>>, startupTimeoutMs: number) {
    this.timeoutMs = startupTimeoutMs;
    this.sql = postgres({
      ...options,
      max: 1,
      // Every (re)connection starts with a limit, so a statement never runs unbounded.
      connection: { ...options.connection, statement_timeout: startupTimeoutMs },
      onclose: () => {
        this.timeoutMs = startupTimeoutMs;
      },
      onnotice: (n: postgres.Notice) => this.notices?.push(`${n.severity}: ${n.message}`),
    });
  }
}

/** postgres.js options for `config` (exported for unit tests). */
export function postgresOptions(
  config: ConnectionConfig,
): postgres.Options<Record<string, postgres.PostgresType>> {
  return {
    // TCP to the dial address when there is one; TLS below still verifies config.hostname.
    host: config.dial?.host ?? config.hostname,
    port: config.dial?.port ?? config.port,
    database: config.database,
    username: config.username,
    // A function, so an empty password is not replaced by $PGPASSWORD.
    password: () => config.password,
    ssl: postgresSsl(config.ssl, config.hostname),
    connect_timeout: config.timeoutSeconds ?? 30,
    idle_timeout: IDLE_SECONDS,
    prepare: false,
    types: TYPES,
    connection: { application_name: 'countersign' },
  };
}

function bindValue(sql: postgres.Sql, v: ParamValue): postgres.ParameterOrJSON<never> {
  // postgres.js infers int8 for a bigint but does not type it; pass it as int8 text.
  return typeof v === 'bigint' ? sql.typed(v.toString(), 20) : v;
}

class PostgresPool implements AdapterPool {
  private readonly secrets: string[];
  private readonly slots: Lender<Slot>;
  private readonly options: postgres.Options<Record<string, postgres.PostgresType>>;

  constructor(private readonly config: ConnectionConfig) {
    this.secrets = secretsOf(config);
    this.options = postgresOptions(config);
    this.slots = new Lender(
      () => new Slot(this.options, (config.timeoutSeconds ?? 30) * 1000),
      (slot) => slot.sql.end({ timeout: 0 }),
      POOL_SIZE,
    );
  }

  async check(): Promise<void> {
    const sql = postgres({ ...this.options, max: 1, fetch_types: false, onnotice: () => {} });
    try {
      await sql`select 1`;
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    } finally {
      await sql.end({ timeout: 0 });
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    // An empty statement gets no command tag from the server and would wait for the time limit.
    const kind = checkStatement(text);
    // The time limit is the server's statement_timeout, set on the session only when it differs
    // (the same credential usually keeps one limit). Not a CancelRequest: one that arrives late
    // cancels whatever the connection runs next, a race the protocol cannot rule out.
    const limitMs = Math.ceil(options.timeoutSeconds * 1000);
    const slot = await this.slots.acquire(limitMs);
    slot.notices = [];
    let timedOut = false;
    let reusable = true;
    // Backstop for a server that does not answer at all: cut the connection.
    const cut = setTimeout(() => {
      timedOut = true;
      reusable = false;
      void slot.sql.end({ timeout: 0 });
    }, limitMs + CUT_GRACE_MS);
    // Set when the answer was returned before the connection finished the statement (below).
    let finishing: Promise<unknown> | null = null;
    try {
      if (slot.timeoutMs !== limitMs) {
        await slot.sql`select set_config('statement_timeout', ${String(limitMs)}, false)`;
        slot.timeoutMs = limitMs;
      }
      // The adapter's job is to run the user's SQL: the text goes to the server as the statement
      // and every value only as a bind parameter, never into the text.
      const query = slot.sql.unsafe(
        text,
        params.map((v) => bindValue(slot.sql, v)),
      );
      // A portal row limit of maxRows + 1: when the server suspends the portal there were more
      // rows than the cap, and CLOSE ends the statement without reading them.
      let complete!: (r: PgResult) => void;
      const completed = new Promise<PgResult>((resolve) => {
        complete = resolve;
      });
      const finished = query.values().cursor(options.maxRows + 1, (rows) => {
        const r = rows as unknown as PgResult;
        if (r.command === null) return slot.sql.CLOSE;
        // The whole result of a SELECT is here (CommandComplete). What is left is one more round
        // trip — Sync, then ReadyForQuery — which only ends the implicit transaction of a
        // statement that read: the answer need not wait for it (issue 14: a third of the target
        // query's time). Anything else waits, since its changes hold only once committed.
        if (r.command.startsWith('SELECT')) complete(r);
      }) as unknown as Promise<PgResult>;
      const first = await Promise.race([
        completed.then((r) => ({ early: true, r })),
        finished.then((r) => ({ early: false, r })),
      ]);
      if (first.early) finishing = finished;
      const res = first.r;
      const columns = res.columns ?? [];
      const rows = new RowCollector(options.maxRows);
      for (const row of res) if (!rows.add(row)) break;
      // No command tag arrives for a portal closed early.
      const command = res.command ?? kind;
      reusable &&= reusableAfter(command.split(' ')[0] ?? '');
      const result = rows.result(
        columns.map((c) => c.name),
        command,
        slot.notices,
        res.count,
      );
      result.columnSources = columns.map((c) =>
        c.table ? { tableOid: c.table, columnNumber: c.number } : null,
      );
      return result;
    } catch (err) {
      if (timedOut || (err as { code?: unknown }).code === QUERY_CANCELED)
        throw timeoutError(
          options.timeoutSeconds,
          err instanceof Error ? err.message : undefined,
          this.secrets,
        );
      reusable &&= reusableAfter(kind);
      throw toAdapterError(err, this.secrets, 'query');
    } finally {
      const settle = () => {
        clearTimeout(cut);
        slot.notices = null;
        if (reusable) this.slots.release(slot);
        else this.slots.discard(slot);
      };
      // The connection goes back to the pool only once it is ready for the next statement; one
      // that failed to get there is closed.
      if (finishing)
        finishing.then(settle, () => {
          reusable = false;
          settle();
        });
      else settle();
    }
  }

  async readSchema(): Promise<SchemaTable[]> {
    const slot = await this.slots.acquire((this.config.timeoutSeconds ?? 30) * 1000);
    try {
      const rows = await slot.sql<SchemaRow[]>`
        select n.nspname as schema, c.relname as name, c.relkind in ('v', 'm') as is_view,
               a.attname as column, format_type(a.atttypid, a.atttypmod) as type, not a.attnotnull as nullable
          from pg_catalog.pg_class c
          join pg_catalog.pg_namespace n on n.oid = c.relnamespace
          join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
         where c.relkind in ('r', 'p', 'v', 'm', 'f')
           and n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%'
           and has_any_column_privilege(c.oid, 'SELECT')
         order by n.nspname, c.relname, a.attnum`;
      this.slots.release(slot);
      return groupSchema(rows);
    } catch (err) {
      this.slots.discard(slot);
      throw toAdapterError(err, this.secrets, 'query');
    }
  }

  close(): Promise<void> {
    return this.slots.close();
  }
}

/** PostgreSQL (postgres.js). Placeholders `$1`, `$2`, ... */
export const postgresAdapter: Adapter = {
  name: 'postgres',
  placeholder: (index) => `$${index}`,
  connect: (config) => guardedConnect('postgres', config, (c) => new PostgresPool(c)),
};
