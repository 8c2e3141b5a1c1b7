// PostgreSQL through node-postgres (pg). One statement per call over the extended protocol, with
// the user's values as bind parameters, in one round trip whose Execute carries a row limit, so a
// capped query never transfers more than maxRows + 1 rows (adapters/postgres-query.ts).
import pg from 'pg';
import { writeKept } from './backup.ts';
import { guardedConnect } from './connect.ts';
import { AdapterError, secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { Lender } from './lender.ts';
import { CappedQuery, type PgAnswer } from './postgres-query.ts';
import { arrayTypesQuery, PgTypes } from './postgres-values.ts';
import { postgresSsl } from './ssl.ts';
import type {
  Adapter,
  AdapterPool,
  BackupStep,
  ConnectionConfig,
  ExecuteOptions,
  ParamValue,
  QueryResult,
  SchemaTable,
  SessionControl,
} from './types.ts';
import {
  checkExecuteOptions,
  checkSessionName,
  checkStatement,
  groupSchema,
  RowCollector,
  reusableAfter,
  type SchemaRow,
} from './values.ts';

const POOL_SIZE = 5;
/** An idle connection is closed after this long, and opened again on its next statement. */
const IDLE_MS = 60_000;
/** Past the time limit, how long the server may take to stop the statement before its connection is cut. */
const CUT_GRACE_MS = 5_000;
/** SQLSTATE query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = '57014';
/** SQLSTATE undefined_object: COMMIT/ROLLBACK PREPARED of an id that is not prepared. */
const UNDEFINED_OBJECT = '42704';

const SCHEMA_QUERY = `
  select n.nspname as schema, c.relname as name, c.relkind in ('v', 'm') as is_view,
         a.attname as column, format_type(a.atttypid, a.atttypmod) as type, not a.attnotnull as nullable
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
   where c.relkind in ('r', 'p', 'v', 'm', 'f')
     and n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%'
     and has_any_column_privilege(c.oid, 'SELECT')
   order by n.nspname, c.relname, a.attnum`;

/** pg Client options for `config` (exported for unit tests). */
export function postgresOptions(config: ConnectionConfig): pg.ClientConfig {
  return {
    // TCP to the dial address when there is one; TLS below still verifies config.hostname.
    host: config.dial?.host ?? config.hostname,
    port: config.dial?.port ?? config.port,
    database: config.database,
    user: config.username,
    // A function, so an empty password is not replaced by $PGPASSWORD.
    password: () => config.password,
    ssl: postgresSsl(config.ssl, config.hostname),
    connectionTimeoutMillis: (config.timeoutSeconds ?? 30) * 1000,
    application_name: 'countersign',
    client_encoding: 'UTF8',
    // As postgres.js did: a statement behind a NAT or load balancer with an idle timeout keeps
    // its connection, and a dead peer is noticed within minutes rather than two hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 60_000,
    // Given, so $PGSSLNEGOTIATION is not read (see newClient).
    sslnegotiation: 'postgres',
  } as pg.ClientConfig;
}

/**
 * A pg Client for `options` with nothing taken from the environment. pg reads a $PG* variable for
 * any option left unset or falsy; the options above set all but two, and a statement must not
 * run with another role, search_path or protocol mode because of the service's environment:
 * $PGOPTIONS (`-c role=…`) and $PGREPLICATION are cleared here.
 */
function newClient(options: pg.ClientConfig): pg.Client {
  const client = new pg.Client(options);
  const params = (client as unknown as { connectionParameters: Record<string, unknown> })
    .connectionParameters;
  params.options = undefined;
  params.replication = undefined;
  return client;
}

/**
 * A server error that leaves the session usable: not FATAL or PANIC, which end it. The severity
 * pg exposes is the localized one (protocol field S), so the SQLSTATE classes that end a session
 * count too: 57P (operator intervention: terminated, shutting down) and 08 (connection exception).
 */
function isStatementError(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return false;
  if (err.severity === 'FATAL' || err.severity === 'PANIC') return false;
  return !/^(57P|08)/.test(err.code ?? '');
}

/**
 * The adapter error for a failed statement: the server's own error as `query`; one that ended
 * the session, or anything else that is not already an AdapterError (pg's "Connection terminated
 * unexpectedly", a socket error), means the connection is gone: `connection` (adapters/README.md,
 * Errors).
 */
function statementFailure(err: unknown, secrets: readonly string[]): AdapterError {
  if (err instanceof AdapterError || isStatementError(err)) return toAdapterError(err, secrets, 'query');
  // FATAL or PANIC: the server ended the session (terminated, shutting down) and says why.
  if (err instanceof pg.DatabaseError) return toAdapterError(err, secrets, 'connection');
  const failure = toAdapterError(err, secrets, 'connection');
  return failure.code ? failure : new AdapterError(failure.message, 'connection', 'CONNECTION_CLOSED');
}

/** The command and the count of a command tag, as postgres.js read them: `INSERT 0 3` → INSERT, 3. */
export function commandTag(tag: string): { command: string; count: number | null } {
  const m = /^(.*?)((?: \d+)*)$/.exec(tag);
  const numbers = m?.[2] ? m[2].trim().split(' ') : [];
  return { command: m?.[1] ?? tag, count: numbers.length > 0 ? Number(numbers.at(-1)) : null };
}

/** Runs one statement on `client`; `limit` 0 reads every row. */
function run(
  client: pg.Client,
  types: PgTypes,
  text: string,
  params: readonly ParamValue[],
  limit: number,
  readOnly = false,
  lead: string | null = null,
) {
  const q = new CappedQuery(text, params, limit, types, readOnly, lead);
  client.query(q as unknown as pg.Submittable);
  return q.answer;
}

/** One connection, opened on first use and again after it closed, and the notices of its statement. */
class Slot {
  notices: string[] | null = null;
  /** The session's statement_timeout in ms: the startup value on every new connection. */
  timeoutMs: number;
  #client: pg.Client | null = null;
  /** A connection being opened (cut() ends it too). */
  #pending: pg.Client | null = null;
  #opening: Promise<pg.Client> | null = null;
  #idle: NodeJS.Timeout | null = null;

  constructor(private readonly pool: PostgresPool) {
    this.timeoutMs = pool.startupTimeoutMs;
  }

  /** The open connection, or a new one. */
  client(): Promise<pg.Client> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    if (this.#client) return Promise.resolve(this.#client);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = null;
    });
    return this.#opening;
  }

  async #open(): Promise<pg.Client> {
    // Every connection starts with a limit, so a statement never runs unbounded.
    const client = newClient({ ...this.pool.options, statement_timeout: this.pool.startupTimeoutMs });
    const gone = () => {
      if (this.#client === client) this.#client = null;
    };
    // A connection that dies between statements is dropped here and opened again on next use.
    client.on('error', gone);
    client.on('end', gone);
    client.on('notice', (n: { severity?: string; message?: string }) =>
      this.notices?.push(`${n.severity}: ${n.message}`),
    );
    this.#pending = client;
    try {
      await client.connect();
      await this.pool.readTypes(client);
    } catch (err) {
      // Not kept, so not left open either.
      void client.end().catch(() => {});
      throw err;
    } finally {
      this.#pending = null;
    }
    this.timeoutMs = this.pool.startupTimeoutMs;
    this.#client = client;
    return client;
  }

  /** Released: closed if nobody uses it for IDLE_MS. */
  rest(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => void this.close(), IDLE_MS);
    this.#idle.unref();
  }

  /** Cuts the connection at once (a server that does not answer). */
  cut(): void {
    for (const c of [this.#client, this.#pending]) c?.connection.stream.destroy();
    this.#client = null;
  }

  async close(): Promise<void> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    // A connection still being opened is cut: pg's end() there settles nothing, and the caller
    // waiting for it would wait forever.
    this.#pending?.connection.stream.destroy();
    const client = this.#client;
    this.#client = null;
    if (client) await client.end().catch(() => {});
  }
}

class PostgresPool implements AdapterPool {
  private readonly secrets: string[];
  private readonly slots: Lender<Slot>;
  readonly options: pg.ClientConfig;
  readonly startupTimeoutMs: number;
  readonly types = new PgTypes();
  #typesRead = false;

  constructor(config: ConnectionConfig) {
    this.secrets = secretsOf(config);
    this.options = postgresOptions(config);
    this.startupTimeoutMs = (config.timeoutSeconds ?? 30) * 1000;
    this.slots = new Lender(
      () => new Slot(this),
      (slot) => slot.close(),
      POOL_SIZE,
    );
  }

  /** The server's array types, read once per pool; until then only the built-in arrays parse. */
  async readTypes(client: pg.Client): Promise<void> {
    if (this.#typesRead) return;
    const answer = await run(client, this.types, arrayTypesQuery, [], 0);
    this.types.addArrays(answer.rows as Array<[number, number]>);
    this.#typesRead = true;
  }

  async check(): Promise<void> {
    let client: pg.Client | null = null;
    try {
      client = newClient(this.options);
      client.on('error', () => {});
      await client.connect();
      await run(client, this.types, 'select 1', [], 0);
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    } finally {
      await client?.end().catch(() => {});
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    // An empty statement gets no command tag from the server.
    const kind = checkStatement(text);
    // The time limit is the server's statement_timeout, set on the session only when it differs
    // (the same credential usually keeps one limit). Not a CancelRequest: one that arrives late
    // cancels whatever the connection runs next, a race the protocol cannot rule out.
    const limitMs = Math.ceil(options.timeoutSeconds * 1000);
    const slot = await this.slots.acquire(limitMs);
    slot.notices = [];
    let timedOut = false;
    // A tagged session is closed afterwards: lent on, its name would make it a target of endTagged.
    let reusable = options.tag === undefined && options.prepareAs === undefined;
    // Backstop for a server that does not answer at all: cut the connection, and stop waiting
    // whether or not the driver then settles what it was doing.
    let stop!: (err: Error) => void;
    const stopped = new Promise<never>((_, reject) => {
      stop = reject;
    });
    stopped.catch(() => {});
    const cut = setTimeout(() => {
      timedOut = true;
      reusable = false;
      slot.cut();
      stop(new Error('no answer from the server'));
    }, limitMs + CUT_GRACE_MS);
    try {
      let client: pg.Client;
      try {
        client = await Promise.race([slot.client(), stopped]);
      } catch (err) {
        reusable = false;
        if (timedOut) throw err;
        throw toAdapterError(err, this.secrets, 'connection');
      }
      if (slot.timeoutMs !== limitMs) {
        const set = "select set_config('statement_timeout', $1, false)";
        await Promise.race([run(client, this.types, set, [String(limitMs)], 0), stopped]);
        slot.timeoutMs = limitMs;
      }
      // The adapter's job is to run the user's SQL: the text goes to the server as the statement
      // and every value only as a bind parameter, never into the text. A row limit of
      // maxRows + 1 tells a capped result from an exact one. Read-only: in a read-only
      // transaction opened and committed in the same round trip (adapters/postgres-query.ts).
      const answer: PgAnswer = await Promise.race([this.#statement(client, text, params, options), stopped]);
      const rows = new RowCollector(options.maxRows);
      for (const row of answer.rows) if (!rows.add(row)) break;
      // No command tag arrives for a statement stopped at the row limit.
      const { command, count } =
        answer.command === null ? { command: kind, count: null } : commandTag(answer.command);
      reusable &&= reusableAfter(command.split(' ')[0] ?? '');
      const result = rows.result(
        answer.fields.map((f) => f.name),
        command,
        slot.notices,
        count,
      );
      result.columnSources = answer.fields.map((f) =>
        f.tableID ? { tableOid: f.tableID, columnNumber: f.columnID } : null,
      );
      return result;
    } catch (err) {
      // A read-only statement that failed (or was canceled) left its transaction aborted.
      if (options.readOnly) reusable = false;
      if (timedOut || (err as { code?: unknown }).code === QUERY_CANCELED)
        throw timeoutError(
          options.timeoutSeconds,
          err instanceof Error ? err.message : undefined,
          this.secrets,
        );
      // A connection the server ended (FATAL: terminated, shut down) or lost is not reused: its
      // end may not have reached the driver yet, and the next statement would fail on it.
      reusable &&= isStatementError(err) && reusableAfter(kind);
      throw statementFailure(err, this.secrets);
    } finally {
      clearTimeout(cut);
      slot.notices = null;
      if (reusable) {
        slot.rest();
        this.slots.release(slot);
      } else this.slots.discard(slot);
    }
  }

  /**
   * The user's statement, under its tag and in a prepared transaction when asked. A failure
   * anywhere leaves the transaction open on a connection that execute() then closes, which rolls
   * it back; once PREPARE TRANSACTION answered, it belongs to no session and survives that.
   */
  async #statement(
    client: pg.Client,
    text: string,
    params: readonly ParamValue[],
    options: ExecuteOptions,
  ): Promise<PgAnswer> {
    const limit = options.maxRows + 1;
    if (options.tag !== undefined) {
      const set = "select set_config('application_name', $1, false)";
      await run(client, this.types, set, [checkSessionName(options.tag)], 0);
    }
    if (options.backup) return this.#withBackup(client, text, params, limit, options.backup);
    if (options.prepareAs === undefined)
      return run(client, this.types, text, params, limit, options.readOnly === true);
    const id = checkSessionName(options.prepareAs);
    await run(client, this.types, 'begin', [], 0);
    const answer = await run(client, this.types, text, params, limit);
    const prepared = await run(client, this.types, `prepare transaction '${id}'`, [], 0);
    // Outside a transaction block PREPARE answers ROLLBACK: the statement ended ours itself
    // (COMMIT, ROLLBACK), so nothing is prepared and its effects are whatever it did.
    if (prepared.command !== 'PREPARE TRANSACTION')
      throw new AdapterError(
        'the statement ended its transaction itself; it cannot run exactly once',
        'query',
      );
    return answer;
  }

  /**
   * The rows the write will touch, then the write, in one REPEATABLE READ transaction. Both read
   * the snapshot the first statement took, so the write touches exactly the rows kept: rows
   * inserted since are invisible to it, and a kept row changed by someone else since makes the
   * write fail with a serialization error instead of escaping the backup. No FOR UPDATE: it would
   * only write a lock into every row the write is about to rewrite anyway (the bench's 1 000-row
   * write: ×2.49 with it, ×2.24 without). A failure leaves the transaction open on a connection
   * execute() closes, which rolls it back.
   */
  async #withBackup(
    client: pg.Client,
    text: string,
    params: readonly ParamValue[],
    limit: number,
    backup: BackupStep,
  ): Promise<PgAnswer> {
    // BEGIN goes in the same write as the read: one round trip, and the read still takes the
    // transaction's snapshot, being its first statement.
    const begin = 'begin isolation level repeatable read';
    const saved = await run(client, this.types, backup.select, backup.params, 0, false, begin);
    const answer = await writeKept(backup, saved.rows, false, () =>
      run(client, this.types, text, params, limit),
    );
    const committed = await run(client, this.types, 'commit', [], 0);
    // A transaction that failed answers COMMIT with ROLLBACK.
    if (committed.command !== 'COMMIT')
      throw new AdapterError('the write was rolled back by the server', 'query', 'ROLLED_BACK');
    return answer;
  }

  /** One statement of the service's own on a pooled connection (SessionControl). */
  async #control(text: string, params: ParamValue[] = []): Promise<unknown[][]> {
    const slot = await this.slots.acquire(this.startupTimeoutMs);
    let ok = false;
    try {
      const client = await slot.client();
      const answer = await run(client, this.types, text, params, 0);
      ok = true;
      return answer.rows;
    } catch (err) {
      throw statementFailure(err, this.secrets);
    } finally {
      if (ok) {
        slot.rest();
        this.slots.release(slot);
      } else this.slots.discard(slot);
    }
  }

  #twoPhase: Promise<boolean> | null = null;

  readonly sessions: SessionControl = {
    twoPhase: () => {
      this.#twoPhase ??= this.#control("select current_setting('max_prepared_transactions')::int > 0").then(
        (rows) => rows[0]?.[0] === true,
        (err: unknown) => {
          this.#twoPhase = null;
          throw err;
        },
      );
      return this.#twoPhase;
    },
    endTagged: async (prefix, waitMs) => {
      // Sessions of the same role may be ended without privileges (PostgreSQL docs §9.28.2).
      const match = 'left(application_name, length($1)) = $1 and pid <> pg_backend_pid()';
      await this.#control(`select pg_terminate_backend(pid) from pg_stat_activity where ${match}`, [prefix]);
      const deadline = Date.now() + waitMs;
      for (;;) {
        const rows = await this.#control(`select count(*)::int from pg_stat_activity where ${match}`, [
          prefix,
        ]);
        if (rows[0]?.[0] === 0) return;
        if (Date.now() > deadline)
          throw new AdapterError('a session of an earlier attempt did not end', 'timeout', 'TIMEOUT');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    prepared: async (prefix) => {
      const rows = await this.#control(
        'select gid from pg_prepared_xacts where left(gid, length($1)) = $1 and database = current_database()',
        [prefix],
      );
      return rows.map((r) => String(r[0]));
    },
    finish: async (id, commit) => {
      const verb = commit ? 'commit' : 'rollback';
      try {
        await this.#control(`${verb} prepared '${checkSessionName(id)}'`);
        return true;
      } catch (err) {
        if ((err as AdapterError).code === UNDEFINED_OBJECT) return false;
        throw err;
      }
    },
  };

  async readSchema(): Promise<SchemaTable[]> {
    const slot = await this.slots.acquire(this.startupTimeoutMs);
    try {
      const client = await slot.client();
      const answer = await run(client, this.types, SCHEMA_QUERY, [], 0);
      const names = answer.fields.map((f) => f.name);
      const tables = groupSchema(
        answer.rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])) as unknown as SchemaRow),
      );
      slot.rest();
      this.slots.release(slot);
      return tables;
    } catch (err) {
      this.slots.discard(slot);
      throw toAdapterError(err, this.secrets, 'query');
    }
  }

  close(): Promise<void> {
    return this.slots.close();
  }
}

/** PostgreSQL (node-postgres). Placeholders `$1`, `$2`, ... */
export const postgresAdapter: Adapter = {
  name: 'postgres',
  placeholder: (index) => `$${index}`,
  connect: (config) => guardedConnect('postgres', config, (c) => new PostgresPool(c)),
};
