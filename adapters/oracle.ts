// Oracle through node-oracledb in thin mode (pure JavaScript; initOracleClient is never called).
// Values are positional binds `:1`, `:2`, ...; `maxRows` makes the driver stop fetching after
// maxRows + 1 rows; `callTimeout` bounds each round trip. Not run against a real server
// (README.md): configuration, TLS options and result shaping are unit-tested.
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type oracledb from 'oracledb';
import type {
  Connection,
  ConnectionAttributes,
  FetchTypeResult,
  Metadata,
  PoolAttributes,
  Result,
} from 'oracledb';
import { guardedConnect } from './connect.ts';
import { AdapterError, secretsOf, timeoutError, toAdapterError } from './errors.ts';
import { oracleTls } from './ssl.ts';
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

// Loaded on first use: oracledb is a sizeable module most installations never call, and every
// process loads all adapters at start (dev mode's start time).
let loaded: typeof oracledb | undefined;
const driver = (): typeof oracledb => {
  loaded ??= createRequire(import.meta.url)('oracledb') as typeof oracledb;
  return loaded;
};

const POOL_SIZE = 5;
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._$#-]*$/;
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

/**
 * The Easy Connect string `tcp[s]://host:port/service`. `database` is the service name. Both
 * parts are checked, since a `(`, `?` or `/` would change what the string means.
 */
export function oracleConnectString(config: ConnectionConfig): string {
  const { protocol } = oracleTls(config.ssl);
  const v6 = isIP(config.hostname) === 6;
  if (!v6 && !HOST_NAME.test(config.hostname))
    throw new AdapterError(`not a valid host name: ${config.hostname}`, 'config');
  if (!SERVICE_NAME.test(config.database))
    throw new AdapterError(`not a valid Oracle service name: ${config.database}`, 'config');
  const host = v6 ? `[${config.hostname}]` : config.hostname;
  return `${protocol}://${host}:${config.port}/${config.database}`;
}

/** node-oracledb connection attributes for `config` (exported for unit tests). */
export function oracleConnectionAttributes(config: ConnectionConfig): ConnectionAttributes {
  const tls = oracleTls(config.ssl);
  const attrs: ConnectionAttributes = {
    user: config.username,
    password: config.password,
    connectString: oracleConnectString(config),
    connectTimeout: config.timeoutSeconds ?? 30,
  };
  if (tls.walletContent) attrs.walletContent = tls.walletContent;
  if (tls.sslServerDNMatch !== undefined) attrs.sslServerDNMatch = tls.sslServerDNMatch;
  return attrs;
}

/** The pool attributes: the connection's plus the pool's size and idle time. */
export function oraclePoolAttributes(config: ConnectionConfig): PoolAttributes {
  return {
    ...oracleConnectionAttributes(config),
    poolMin: 0,
    poolMax: POOL_SIZE,
    poolIncrement: 1,
    poolTimeout: 60,
    // A statement waits at most this long for a free connection (getConnection has no per-call limit).
    queueTimeout: 60_000,
  };
}

/** Bind values: Oracle before 23ai has no SQL BOOLEAN, so booleans go as 1/0; bytes as Buffer. */
export function oracleBind(v: ParamValue): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return v;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** DATE and TIMESTAMP have no zone: thin mode builds the Date from local components; write those back. */
export function wallClock(v: unknown): unknown {
  if (!(v instanceof Date)) return v;
  const date = `${pad(v.getFullYear(), 4)}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
  return `${date}T${pad(v.getHours())}:${pad(v.getMinutes())}:${pad(v.getSeconds())}.${pad(v.getMilliseconds(), 3)}`;
}

/**
 * How each column is fetched (README "Value mapping"): NUMBER with decimals or more than 15
 * digits as exact strings, unconstrained NUMBER (COUNT(*) and the like) as numbers, LOBs read
 * whole, zone-less dates as wall-clock ISO text.
 */
export function oracleFetchType(m: Metadata): FetchTypeResult | undefined {
  if (m.dbType === driver().DB_TYPE_NUMBER) {
    const unconstrained = !m.precision && (m.scale === undefined || m.scale === -127);
    if (!unconstrained && ((m.scale ?? 0) > 0 || (m.precision ?? 0) > 15))
      return { type: driver().DB_TYPE_VARCHAR };
    return undefined;
  }
  if (m.dbType === driver().DB_TYPE_CLOB || m.dbType === driver().DB_TYPE_NCLOB)
    return { type: driver().DB_TYPE_VARCHAR };
  if (m.dbType === driver().DB_TYPE_BLOB) return { type: driver().DB_TYPE_RAW };
  if (m.dbType === driver().DB_TYPE_DATE || m.dbType === driver().DB_TYPE_TIMESTAMP)
    return { converter: wallClock };
  return undefined;
}

/** A node-oracledb result as a QueryResult, cut at `maxRows`. */
export function oracleResult(res: Result<unknown[]>, kind: string, maxRows: number): QueryResult {
  const rows = new RowCollector(maxRows);
  for (const row of res.rows ?? []) if (!rows.add(row)) break;
  const messages = res.warning ? [res.warning.message] : [];
  return rows.result(
    (res.metaData ?? []).map((m) => m.name),
    kind,
    messages,
    res.rowsAffected ?? null,
  );
}

class OraclePool implements AdapterPool {
  private readonly secrets: string[];
  private pool: ReturnType<typeof oracledb.createPool> | null = null;

  constructor(private readonly config: ConnectionConfig) {
    this.secrets = secretsOf(config);
  }

  private connection(): Promise<Connection> {
    if (!this.pool) {
      this.pool = driver()
        .createPool(oraclePoolAttributes(this.config))
        .catch((err: unknown) => {
          this.pool = null;
          throw err;
        });
    }
    return this.pool.then((p) => p.getConnection());
  }

  async check(): Promise<void> {
    let conn: Connection | undefined;
    try {
      conn = await driver().getConnection(oracleConnectionAttributes(this.config));
      await conn.execute('SELECT 1 FROM DUAL', [], {});
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    } finally {
      await conn?.close().catch(() => {});
    }
  }

  async execute(text: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult> {
    checkExecuteOptions(options);
    const kind = checkStatement(text);
    let conn: Connection;
    try {
      conn = await this.connection();
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'connection');
    }
    let drop = !reusableAfter(kind);
    try {
      conn.callTimeout = options.timeoutSeconds * 1000;
      const res = await oracleRun(conn, text, params.map(oracleBind), {
        outFormat: driver().OUT_FORMAT_ARRAY,
        maxRows: options.maxRows + 1,
        fetchTypeHandler: oracleFetchType,
        readOnly: options.readOnly === true,
      }).catch((err: unknown) => {
        // A rollback that failed leaves the transaction in an unknown state.
        if ((err as { rollbackFailed?: boolean }).rollbackFailed) drop = true;
        throw err;
      });
      return oracleResult(res, kind, options.maxRows);
    } catch (err) {
      const e = toAdapterError(err, this.secrets, 'query');
      if (e.code === 'NJS-123' || e.code === 'DPI-1067') {
        drop = true; // a call timeout leaves the connection unusable
        throw timeoutError(options.timeoutSeconds, e.message, this.secrets);
      }
      throw e;
    } finally {
      await conn.close({ drop }).catch(() => {});
    }
  }

  async readSchema(): Promise<SchemaTable[]> {
    let conn: Connection | undefined;
    try {
      conn = await this.connection();
      const res = await conn.execute<SchemaRow>(
        `SELECT c.owner AS "schema", c.table_name AS "name",
                CASE WHEN v.view_name IS NULL THEN 0 ELSE 1 END AS "is_view",
                c.column_name AS "column", c.data_type AS "type",
                CASE WHEN c.nullable = 'Y' THEN 1 ELSE 0 END AS "nullable"
           FROM all_tab_columns c
           LEFT JOIN all_views v ON v.owner = c.owner AND v.view_name = c.table_name
          WHERE c.owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')
          ORDER BY c.owner, c.table_name, c.column_id`,
        [],
        { outFormat: driver().OUT_FORMAT_OBJECT },
      );
      return groupSchema(
        (res.rows ?? []).map((r) => ({ ...r, is_view: Boolean(r.is_view), nullable: Boolean(r.nullable) })),
      );
    } catch (err) {
      throw toAdapterError(err, this.secrets, 'query');
    } finally {
      await conn?.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    if (pool) await (await pool.catch(() => null))?.close(0);
  }
}

/** What oracleRun uses of a node-oracledb connection. */
export type OracleSession = Pick<Connection, 'execute' | 'rollback'>;

/** First statement of a read-only execute (exported for unit tests). */
export const ORACLE_READ_ONLY = 'SET TRANSACTION READ ONLY';

/**
 * Runs one statement. Every statement commits, as with the other engines' autocommit; a
 * read-only one runs in Oracle's read-only transaction (SET TRANSACTION READ ONLY must be the
 * first statement of its transaction, Oracle SQL Language Reference) and ends with a rollback.
 * DDL commits implicitly and so would leave that transaction: the pipeline never sends DDL as a
 * read (sql/classify.ts).
 */
export async function oracleRun(
  conn: OracleSession,
  text: string,
  binds: unknown[],
  options: {
    outFormat: number;
    maxRows: number;
    fetchTypeHandler: typeof oracleFetchType;
    readOnly: boolean;
  },
): Promise<Result<unknown[]>> {
  const { readOnly, ...exec } = options;
  if (!readOnly) return conn.execute<unknown[]>(text, binds, { ...exec, autoCommit: true });
  await conn.execute(ORACLE_READ_ONLY, [], { autoCommit: false });
  let outcome: Result<unknown[]>;
  try {
    outcome = await conn.execute<unknown[]>(text, binds, { ...exec, autoCommit: false });
  } catch (err) {
    await conn.rollback().catch(() => {
      Object.assign(err as object, { rollbackFailed: true });
    });
    throw err;
  }
  try {
    await conn.rollback();
  } catch (err) {
    throw Object.assign(err as object, { rollbackFailed: true });
  }
  return outcome;
}

/** Oracle (node-oracledb thin mode). Placeholders `:1`, `:2`, ... */
export const oracleAdapter: Adapter = {
  name: 'oracle',
  placeholder: (index) => `:${index}`,
  connect: (config) => guardedConnect('oracle', config, (c) => new OraclePool(c)),
};
