// MySQL and MariaDB through mysql2. Statements run as server-side prepared statements (binary
// protocol), so values are bound by the server, never escaped into the text; rows are streamed
// and the connection is dropped once maxRows + 1 arrived, which stops the server sending.
import { isIP, connect as netConnect, type Socket } from 'node:net';
import mysql, { type FieldPacket, type PoolConnection, type PoolOptions, type QueryError } from 'mysql2';
import { writeKept } from './backup.ts';
import { guardedConnect } from './connect.ts';
import { AdapterError, secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { mysqlSsl, tlsMode } from './ssl.ts';
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
const CANCEL_GRACE_MS = 5_000;
const ER_UNSUPPORTED_PS = 1295;
/** XA COMMIT / XA ROLLBACK of an id that is not prepared, or not yet free to settle (finish). */
const ER_XAER_NOTA = 'ER_XAER_NOTA';
/** How long finish waits for the session that prepared a transaction to let go of it. */
const SETTLE_WAIT_MS = 10_000;
// Column types whose text mysql2 hands over with a space between date and time (dateStrings).
const DATETIME_TYPES = new Set([7 /* TIMESTAMP */, 12 /* DATETIME */]);

/** mysql2 connection options for `config` (exported for unit tests). */
export function mysqlOptions(config: ConnectionConfig): PoolOptions {
  const options: PoolOptions = {
    host: config.hostname,
    port: config.port,
    user: config.username,
    password: config.password,
    database: config.database,
    ssl: mysqlSsl(config.ssl),
    connectTimeout: (config.timeoutSeconds ?? 30) * 1000,
    connectionLimit: POOL_SIZE,
    maxIdle: POOL_SIZE,
    idleTimeout: 60_000,
    enableKeepAlive: true,
    // Exact values (README "Value mapping"): BIGINT and DECIMAL as strings, dates as the server
    // wrote them; Date parameters are sent as UTC wall time.
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    timezone: 'Z',
    multipleStatements: false,
    maxPreparedStatements: 64,
  };
  // mysql2 names TLS (servername, verifyIdentity) after `host`, so with a dial address `host`
  // stays the configured name and only the socket goes elsewhere.
  const dial = config.dial ?? { host: config.hostname, port: config.port };
  if (config.dial || (tlsMode(config.ssl) === 'verify-full' && isIP(config.hostname))) {
    options.stream = () => socketNamed(config.hostname, dial.host, dial.port);
  }
  return options;
}

/**
 * A TCP socket that remembers `host` even when it is an IP address. mysql2 sends no servername
 * for an IP and skips its own name check, and Node then checks the certificate against
 * `socket._host`, which it records for DNS names only, else against 'localhost': verify-full to
 * an IP would accept any certificate naming localhost. (mysql2 only sets no-delay and keep-alive
 * on sockets it makes itself, so this one does too.)
 */
function socketNamed(host: string, dialHost: string, port: number): Socket {
  const socket = netConnect({ host: dialHost, port });
  Object.assign(socket, { _host: host });
  socket.setNoDelay(true);
  socket.once('connect', () => socket.setKeepAlive(true));
  return socket;
}

/** Statements of a read-only execute, before and after the caller's (exported for unit tests). */
export const READ_ONLY_SESSION = 'SET SESSION TRANSACTION READ ONLY';
export const READ_WRITE_SESSION = 'SET SESSION TRANSACTION READ WRITE';

/** One statement of ours over the text protocol. */
function simpleQuery(conn: PoolConnection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.query(sql, (err) => (err ? reject(err) : resolve())));
}

/** A pooled connection goes back in the access mode every connection starts in. */
function restoreAccessMode(conn: PoolConnection): Promise<void> {
  return simpleQuery(conn, READ_WRITE_SESSION);
}

interface Outcome {
  fields: FieldPacket[];
  rows: RowCollector;
  affected: number | null;
  warnings: number;
}

class MysqlPool implements AdapterPool {
  private readonly secrets: string[];
  private readonly options: PoolOptions;
  private readonly pool: mysql.Pool;

  constructor(config: ConnectionConfig) {
    this.secrets = secretsOf(config);
    this.options = mysqlOptions(config);
    this.pool = mysql.createPool(this.options);
  }

  async check(): Promise<void> {
    const conn = mysql.createConnection(this.options);
    conn.on('error', () => {}); // reported through the query callback
    try {
      await new Promise<void>((resolve, reject) =>
        conn.query('SELECT 1', (err) => (err ? reject(err) : resolve())),
      );
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    } finally {
      conn.destroy();
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    const kind = checkStatement(text);
    const started = performance.now();
    const limitMs = options.timeoutSeconds * 1000;
    const conn = await this.connection(limitMs);
    const leftMs = Math.max(1, limitMs - (performance.now() - started));
    let timedOut = false;
    // A tagged session is closed afterwards: lent on, its tag could be found by endTagged.
    const tagged = options.tag !== undefined || options.prepareAs !== undefined;
    let reusable = reusableAfter(kind) && !tagged;
    const xa = options.prepareAs === undefined ? null : `'${checkSessionName(options.prepareAs)}'`;
    // The tag leads the statement text: PROCESSLIST shows it while the statement runs.
    const sql = options.tag === undefined ? text : `/* ${checkSessionName(options.tag)} */ ${text}`;
    let cut: NodeJS.Timeout | undefined;
    const abort = new AbortController();
    const cancel = setTimeout(() => {
      timedOut = true;
      this.kill(conn.threadId);
      // If the server does not stop after the kill, the connection is cut.
      cut = setTimeout(() => {
        abort.abort();
        conn.destroy();
      }, CANCEL_GRACE_MS);
    }, leftMs);
    try {
      // Read-only: the session's access mode, not START TRANSACTION READ ONLY, because a DDL
      // statement commits the open transaction first and would then run in read-write mode.
      // The access mode applies to autocommitted statements too (MySQL docs, SET TRANSACTION).
      if (options.readOnly) await simpleQuery(conn, READ_ONLY_SESSION);
      if (xa) await this.plain(conn, `XA START ${xa}`);
      const write = async () => {
        const out = await this.run(conn, sql, params, options.maxRows, abort.signal);
        // A killed SLEEP() returns 1 instead of failing: past the limit, the result is not trusted.
        if (timedOut) throw new Error('interrupted');
        return out;
      };
      let outcome: Outcome;
      if (options.backup) {
        outcome = await this.writeWithBackup(conn, options.backup, abort.signal, write);
        await this.plain(conn, 'COMMIT');
      } else outcome = await write();
      // The stream was abandoned mid-way: the connection is still receiving rows.
      const usable = !outcome.rows.truncated;
      if (!usable) reusable = false;
      const messages =
        outcome.warnings > 0 && usable && (reusable || tagged) ? await this.warnings(conn) : [];
      if (options.readOnly && reusable) await restoreAccessMode(conn).catch(() => (reusable = false));
      if (xa) {
        if (!usable) throw new AdapterError('a statement cut at the row limit cannot be prepared', 'query');
        // A prepared XA transaction outlives its connection (MariaDB 10.5+, MySQL 5.7.7+).
        await this.plain(conn, `XA END ${xa}`);
        await this.plain(conn, `XA PREPARE ${xa}`);
      }
      const columns = outcome.fields.map((f) => f.name);
      return outcome.rows.result(columns, kind, messages, outcome.affected);
    } catch (err) {
      if (timedOut) {
        reusable = false;
        const detail = err instanceof Error && err.message !== 'interrupted' ? err.message : undefined;
        throw timeoutError(options.timeoutSeconds, detail, this.secrets);
      }
      // A backup's transaction may still be open: the connection is closed, which rolls it back.
      if ((err as QueryError).fatal || options.backup) reusable = false;
      if (options.readOnly && reusable) await restoreAccessMode(conn).catch(() => (reusable = false));
      throw toAdapterError(err, this.secrets, 'query');
    } finally {
      clearTimeout(cancel);
      clearTimeout(cut);
      if (reusable) conn.release();
      else conn.destroy();
    }
  }

  /**
   * The write, after the rows it will touch were read in its transaction with a locking read:
   * the next-key locks keep the rows and the gaps of the range as they are until the write
   * commits. The rows are kept while the write runs (adapters/backup.ts).
   */
  private async writeWithBackup(
    conn: PoolConnection,
    backup: BackupStep,
    signal: AbortSignal,
    write: () => Promise<Outcome>,
  ): Promise<Outcome> {
    await this.plain(conn, 'START TRANSACTION');
    const read = await this.run(conn, backup.select, backup.params, backup.maxRows, signal);
    return writeKept(backup, read.rows.rows, read.rows.truncated, write);
  }

  /** Prepared first; a statement the server cannot prepare runs over the text protocol if it has no parameters. */
  private async run(
    conn: PoolConnection,
    sql: string,
    params: ParamValue[],
    maxRows: number,
    signal: AbortSignal,
  ): Promise<Outcome> {
    try {
      return await this.stream(conn, sql, params, maxRows, true, signal);
    } catch (err) {
      if ((err as QueryError).errno !== ER_UNSUPPORTED_PS || params.length > 0) throw err;
      return await this.stream(conn, sql, params, maxRows, false, signal);
    }
  }

  /** Runs one statement, keeping the first result set's rows up to the cap. */
  private stream(
    conn: PoolConnection,
    sql: string,
    values: ParamValue[],
    maxRows: number,
    prepared: boolean,
    signal: AbortSignal,
  ): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const out: Outcome = { fields: [], rows: new RowCollector(maxRows), affected: null, warnings: 0 };
      let datetime: number[] = [];
      let settled = false;
      const finish = (err?: unknown) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(out);
      };
      signal.addEventListener('abort', () => finish(new Error('interrupted')), { once: true });
      const cmd = prepared
        ? conn.execute({ sql, values, rowsAsArray: true })
        : conn.query({ sql, rowsAsArray: true });
      cmd.on('fields', (fields: FieldPacket[] | undefined) => {
        // undefined for a statement without a result set; later result sets (CALL) are not returned.
        if (!fields || out.fields.length > 0) return;
        out.fields = fields;
        datetime = fields.flatMap((f, i) => (DATETIME_TYPES.has(f.columnType ?? -1) ? [i] : []));
      });
      cmd.on('result', (row: unknown, index?: number) => {
        if (settled) return;
        if (!Array.isArray(row)) {
          const header = row as { affectedRows?: number; warningStatus?: number };
          out.affected = header.affectedRows ?? null;
          out.warnings = header.warningStatus ?? 0;
          return;
        }
        if ((index ?? 0) > 0) return;
        for (const i of datetime)
          if (typeof row[i] === 'string') row[i] = (row[i] as string).replace(' ', 'T');
        if (!out.rows.add(row)) finish(); // cap reached: stop reading, the caller drops the connection
      });
      cmd.on('error', (err: QueryError) => finish(err));
      cmd.on('end', () => finish());
    });
  }

  private connection(timeoutMs: number): Promise<PoolConnection> {
    return new Promise<PoolConnection>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new AdapterError(`no free connection within ${timeoutMs / 1000} s`, 'timeout', 'TIMEOUT'));
      }, timeoutMs);
      this.pool.getConnection((err, conn) => {
        clearTimeout(timer);
        if (late) return conn?.release();
        if (err) reject(toAdapterError(err, this.secrets, 'connection'));
        else resolve(conn);
      });
    });
  }

  /** KILL QUERY from a connection of its own: the statement's connection is busy running it. */
  private kill(threadId: number): void {
    const conn = mysql.createConnection(this.options);
    conn.on('error', () => {});
    // threadId is the server's connection id, an integer the driver read from the handshake.
    conn.query(`KILL QUERY ${Number(threadId)}`, () => conn.destroy());
  }

  /** A statement of the service's own over the text protocol, without rows. */
  private plain(conn: mysql.Connection | mysql.Pool, sql: string): Promise<unknown[][]> {
    return new Promise((resolve, reject) =>
      conn.query({ sql, rowsAsArray: true }, (err, rows) =>
        err ? reject(err) : resolve(Array.isArray(rows) ? (rows as unknown[][]) : []),
      ),
    );
  }

  /** One statement of the service's own on a pooled connection (SessionControl). */
  private async control(sql: string): Promise<unknown[][]> {
    try {
      return await this.plain(this.pool, sql);
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'query');
    }
  }

  #twoPhase: Promise<boolean> | null = null;

  readonly sessions: SessionControl = {
    twoPhase: () => {
      // Before these versions a prepared XA transaction was rolled back with its connection.
      this.#twoPhase ??= this.control('SELECT VERSION()').then(
        (rows) => xaSurvivesDisconnect(String(rows[0]?.[0] ?? '')),
        (err: unknown) => {
          this.#twoPhase = null;
          throw err;
        },
      );
      return this.#twoPhase;
    },
    endTagged: async (prefix, waitMs) => {
      const like = `'/* ${checkSessionName(prefix)}%'`;
      const find = `SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ${like} AND ID <> CONNECTION_ID()`;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const ids = (await this.control(find)).map((r) => Number(r[0]));
        if (ids.length === 0) return;
        if (Date.now() > deadline)
          throw new AdapterError('a session of an earlier attempt did not end', 'timeout', 'TIMEOUT');
        // The ids are integers the server just listed.
        for (const id of ids) await this.control(`KILL CONNECTION ${id}`).catch(() => {});
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    prepared: async (prefix) => {
      // formatID, gtrid_length, bqual_length, data (gtrid then bqual).
      const rows = await this.control('XA RECOVER');
      return rows.map((r) => String(r[3] ?? '').slice(0, Number(r[1]))).filter((id) => id.startsWith(prefix));
    },
    finish: async (id, commit) => {
      const name = checkSessionName(id);
      const deadline = Date.now() + SETTLE_WAIT_MS;
      for (;;) {
        try {
          await this.control(`XA ${commit ? 'COMMIT' : 'ROLLBACK'} '${name}'`);
          return true;
        } catch (err) {
          if ((err as AdapterError).code !== ER_XAER_NOTA) throw err;
        }
        // Unknown to this session, yet listed by XA RECOVER: prepared, but still attached to the
        // session that prepared it, which the server has not yet seen end (its client closed the
        // connection or died a moment ago). Another session can settle it only once it is
        // detached; "not prepared" now would leave it holding its locks, uncommitted.
        if (!(await this.sessions.prepared(name)).includes(name)) return false;
        if (Date.now() > deadline)
          throw new AdapterError(
            'a prepared transaction is still held by the session that prepared it',
            'timeout',
            'TIMEOUT',
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };

  private warnings(conn: PoolConnection): Promise<string[]> {
    return new Promise((resolve) => {
      conn.query({ sql: 'SHOW WARNINGS', rowsAsArray: true }, (err, rows) => {
        if (err || !Array.isArray(rows)) return resolve([]);
        resolve((rows as unknown[][]).map((r) => `${String(r[0])}: ${String(r[2])}`));
      });
    });
  }

  async readSchema(): Promise<SchemaTable[]> {
    const sql = `SELECT c.TABLE_SCHEMA AS \`schema\`, c.TABLE_NAME AS name, t.TABLE_TYPE = 'VIEW' AS is_view,
                        c.COLUMN_NAME AS \`column\`, c.COLUMN_TYPE AS type, c.IS_NULLABLE = 'YES' AS nullable
                   FROM information_schema.COLUMNS c
                   JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
                  WHERE c.TABLE_SCHEMA = DATABASE()
                  ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`;
    try {
      const rows = await new Promise<SchemaRow[]>((resolve, reject) =>
        this.pool.query(sql, (err, result) => (err ? reject(err) : resolve(result as SchemaRow[]))),
      );
      return groupSchema(
        rows.map((r) => ({
          ...r,
          is_view: Boolean(Number(r.is_view)),
          nullable: Boolean(Number(r.nullable)),
        })),
      );
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'query');
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.pool.end(() => resolve()));
  }
}

/** Whether a prepared XA transaction outlives its connection: MariaDB 10.5+, MySQL 5.7.7+. */
export function xaSurvivesDisconnect(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = (/^(\d+)\.(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
  const at = major * 10_000 + minor * 100 + patch;
  return /mariadb/i.test(version) ? at >= 100_500 : at >= 50_707;
}

/** MySQL / MariaDB (mysql2). Placeholders `?`. */
export const mysqlAdapter: Adapter = {
  name: 'mysql',
  placeholder: () => '?',
  connect: (config) => guardedConnect('mysql', config, (c) => new MysqlPool(c)),
};
