// SQL Server through mssql (tedious). Values are sp_executesql parameters `@p1`, `@p2`, ...;
// rows are streamed and the request is canceled once maxRows + 1 arrived. Not run against a real
// server (README.md): configuration, TLS options and result shaping are unit-tested.
import { createRequire } from 'node:module';
import type sql from 'mssql';
import { guardedConnect } from './connect.ts';
import { secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { sqlserverTls } from './ssl.ts';
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

// Loaded on first use: mssql is a sizeable module most installations never call, and every
// process loads all adapters at start (dev mode's start time).
let loaded: typeof sql | undefined;
const driver = (): typeof sql => {
  loaded ??= createRequire(import.meta.url)('mssql') as typeof sql;
  return loaded;
};

const POOL_SIZE = 5;

/** mssql configuration for `config` (exported for unit tests). */
export function sqlserverConfig(config: ConnectionConfig, poolSize = POOL_SIZE): sql.config {
  const tls = sqlserverTls(config.ssl);
  return {
    server: config.hostname,
    port: config.port,
    database: config.database,
    user: config.username,
    password: config.password,
    connectionTimeout: (config.timeoutSeconds ?? 30) * 1000,
    // Each statement has its own limit (a cancel timer); 0 turns the driver's 15 s default off.
    requestTimeout: 0,
    pool: { max: poolSize, min: 0, idleTimeoutMillis: 60_000 },
    options: {
      encrypt: tls.encrypt,
      trustServerCertificate: tls.trustServerCertificate,
      cryptoCredentialsDetails: tls.cryptoCredentialsDetails,
      appName: 'countersign',
      useUTC: true,
    },
  };
}

/** A column as mssql reports it in arrayRowMode. */
export interface SqlServerColumn {
  name: string;
  type: unknown;
}

// Dates and times in the same ISO shapes as Postgres (README "Value mapping"). With useUTC,
// tedious reads zone-less values as UTC wall time.
const withoutZone = (d: Date) => d.toISOString().slice(0, -1);
function converter(type: unknown): ((v: unknown) => unknown) | null {
  const date = (f: (d: Date) => string) => (v: unknown) => (v instanceof Date ? f(v) : v);
  if (type === driver().Date) return date((d) => d.toISOString().slice(0, 10));
  if (type === driver().Time) return date((d) => d.toISOString().slice(11, -1));
  if (type === driver().DateTime || type === driver().DateTime2 || type === driver().SmallDateTime)
    return date(withoutZone);
  return null; // DateTimeOffset is an instant: jsonValue writes it in UTC
}

/** Accumulates one request's events (recordset, row, rowsaffected, info) into a QueryResult. */
export class SqlServerResult {
  readonly rows: RowCollector;
  private columns: SqlServerColumn[] | null = null;
  private converters: Array<[number, (v: unknown) => unknown]> = [];
  private affected: number | null = null;
  private readonly messages: string[] = [];
  /** Rows of later result sets are not returned; the first one is the statement's answer. */
  private recordsets = 0;

  constructor(maxRows: number) {
    this.rows = new RowCollector(maxRows);
  }

  onRecordset(columns: SqlServerColumn[]): void {
    this.recordsets++;
    if (this.columns) return;
    this.columns = columns;
    this.converters = columns.flatMap((c, i) => {
      const f = converter(c.type);
      return f ? [[i, f] as [number, (v: unknown) => unknown]] : [];
    });
  }

  /** False once the cap is passed: the caller cancels the request. */
  onRow(row: unknown[]): boolean {
    if (this.recordsets > 1) return true;
    for (const [i, f] of this.converters) row[i] = f(row[i]);
    return this.rows.add(row);
  }

  onRowsAffected(count: number): void {
    this.affected = (this.affected ?? 0) + count;
  }

  onInfo(info: { message: string }): void {
    this.messages.push(info.message);
  }

  result(kind: string): QueryResult {
    return this.rows.result(
      (this.columns ?? []).map((c) => c.name),
      kind,
      this.messages,
      this.affected,
    );
  }
}

function bind(req: sql.Request, index: number, v: ParamValue): void {
  const name = `p${index + 1}`;
  if (v instanceof Uint8Array)
    req.input(name, driver().VarBinary, Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  else if (v instanceof Date) req.input(name, driver().DateTimeOffset, v);
  else req.input(name, v);
}

class SqlServerPool implements AdapterPool {
  private readonly secrets: string[];
  private pool: Promise<sql.ConnectionPool> | null = null;

  constructor(private readonly config: ConnectionConfig) {
    this.secrets = secretsOf(config);
  }

  private connected(): Promise<sql.ConnectionPool> {
    if (!this.pool) {
      const pool = new (driver().ConnectionPool)(sqlserverConfig(this.config));
      pool.on('error', () => {}); // surfaced by the request that hits it
      this.pool = pool.connect().catch((err: unknown) => {
        this.pool = null;
        throw toAdapterError(err, this.secrets, 'connection');
      });
    }
    return this.pool;
  }

  async check(): Promise<void> {
    const pool = new (driver().ConnectionPool)(sqlserverConfig(this.config, 1));
    try {
      await pool.connect();
      await pool.request().query('SELECT 1');
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    } finally {
      await pool.close().catch(() => {});
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    const kind = checkStatement(text);
    // A statement that may change session state (BEGIN TRAN, SET, USE...) gets a connection of
    // its own, closed afterwards: mssql cannot take one connection out of its pool. So does a
    // read-only one, whose transaction closing the connection rolls back whatever happens.
    const own =
      reusableAfter(kind) && !options.readOnly
        ? null
        : new (driver().ConnectionPool)(sqlserverConfig(this.config, 1));
    try {
      const pool = own ? await own.connect() : await this.connected();
      return await this.stream(pool, sqlserverBatch(text, options.readOnly === true), params, options, kind);
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'query');
    } finally {
      await own?.close().catch(() => {});
    }
  }

  private stream(
    pool: sql.ConnectionPool,
    text: string,
    params: ParamValue[],
    options: ExecuteOptions,
    kind: string,
  ) {
    return new Promise<QueryResult>((resolve, reject) => {
      const req = new (driver().Request)(pool);
      req.stream = true;
      req.arrayRowMode = true;
      for (const [i, v] of params.entries()) bind(req, i, v);
      const out = new SqlServerResult(options.maxRows);
      let stopped = false;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.cancel();
      }, options.timeoutSeconds * 1000);
      const settle = (err?: unknown) => {
        clearTimeout(timer);
        if (timedOut)
          reject(
            timeoutError(
              options.timeoutSeconds,
              err instanceof Error ? err.message : undefined,
              this.secrets,
            ),
          );
        else if (err && !stopped) reject(err);
        else resolve(out.result(kind));
      };
      req.on('recordset', (columns: SqlServerColumn[]) => out.onRecordset(columns));
      req.on('row', (row: unknown[]) => {
        if (stopped || out.onRow(row)) return;
        stopped = true; // cap reached: cancel, the rows read so far are the answer
        req.cancel();
      });
      req.on('rowsaffected', (count: number) => out.onRowsAffected(count));
      req.on('info', (info: { message: string }) => out.onInfo(info));
      req.on('error', (err: unknown) => settle(err));
      req.on('done', () => settle());
      req.query(text);
    });
  }

  async readSchema(): Promise<SchemaTable[]> {
    try {
      const pool = await this.connected();
      const res = await pool.request().query<SchemaRow>(`
        SELECT c.TABLE_SCHEMA AS [schema], c.TABLE_NAME AS name,
               CAST(CASE WHEN t.TABLE_TYPE = 'VIEW' THEN 1 ELSE 0 END AS bit) AS is_view,
               c.COLUMN_NAME AS [column], c.DATA_TYPE AS type,
               CAST(CASE WHEN c.IS_NULLABLE = 'YES' THEN 1 ELSE 0 END AS bit) AS nullable
          FROM INFORMATION_SCHEMA.COLUMNS c
          JOIN INFORMATION_SCHEMA.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
         ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`);
      return groupSchema(res.recordset);
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'query');
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    if (pool) await (await pool.catch(() => null))?.close();
  }
}

/**
 * The batch sent for `text`. DEVIATION: SQL Server has no read-only transaction (SET TRANSACTION
 * sets only the isolation level), so a read-only statement (one the pipeline classified as a
 * read) runs inside a transaction that is always rolled back: whatever it might change is
 * undone. XACT_ABORT makes any error end the batch and roll back; the newlines keep a trailing
 * `--` comment in `text` from swallowing the rollback, and a connection closed with the
 * transaction still open (a statement cut at the row cap) rolls back on the server.
 */
export function sqlserverBatch(text: string, readOnly: boolean): string {
  if (!readOnly) return text;
  return `SET XACT_ABORT ON;\nBEGIN TRANSACTION;\n${text}\nIF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;`;
}

/** SQL Server (mssql / tedious). Placeholders `@p1`, `@p2`, ... */
export const sqlserverAdapter: Adapter = {
  name: 'sqlserver',
  placeholder: (index) => `@p${index}`,
  connect: (config) => guardedConnect('sqlserver', config, (c) => new SqlServerPool(c)),
};
