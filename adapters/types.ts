/** The engines a database can use (SPEC.md 2.2 `adapter`). */
export const ADAPTERS = ['postgres', 'mysql', 'clickhouse', 'sqlserver', 'oracle'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Default port per adapter, used when a database omits `port`. */
export const DEFAULT_PORTS: Record<AdapterName, number> = {
  postgres: 5432,
  mysql: 3306,
  clickhouse: 8123,
  sqlserver: 1433,
  oracle: 1521,
};

/** SSL settings of a database (SPEC.md 2.2 `ssl`, `verify_server_hostname`; 4.2 setup certificates). PEM text. */
export interface SslSettings {
  enabled: boolean;
  /** With a CA the server chain is verified against it; without one the link is encrypted but unverified. */
  caCert: string | null;
  /** Also require the server certificate to name `hostname` (Postgres verify-full). Requires `caCert`. */
  verifyServerHostname: boolean;
  clientCert: string | null;
  clientKey: string | null;
}

/** Everything an adapter needs to open a connection as one credential. Secrets already decrypted. */
export interface ConnectionConfig {
  adapter: AdapterName;
  hostname: string;
  port: number;
  database: string;
  username: string;
  password: string;
  ssl: SslSettings;
  /** Seconds; null means the adapter default (30 s). */
  timeoutSeconds: number | null;
  /**
   * Where the TCP connection goes when it is not `hostname:port` (an agent's tunnel endpoint,
   * agent/README.md). TLS still names and verifies `hostname`: SNI, verify-full and the
   * identity check use it, never this address. Supported by postgres, mysql and clickhouse.
   */
  dial?: { host: string; port: number };
}

/** A bound parameter value. */
export type ParamValue = string | number | boolean | null | bigint | Date | Uint8Array;

/** SPEC.md 2.1 query step output shape, also the shape of every governed query result. */
export interface QueryResult {
  columns: string[];
  rows: unknown[][];
  command: string;
  messages: string[];
  num_rows: number;
  /** True when the row cap cut the result. */
  truncated: boolean;
  /** Where each result column comes from when the engine reports it (Postgres: table oid + attnum). */
  columnSources?: Array<{ tableOid: number; columnNumber: number } | null>;
}

export interface ExecuteOptions {
  /** At most this many rows are returned; `truncated` tells if there were more. */
  maxRows: number;
  /** Statement timeout in seconds. */
  timeoutSeconds: number;
  /**
   * Run the statement so that it cannot change anything: in a read-only transaction or session
   * where the engine has one; SQL Server, which has none, rolls it back (see each adapter).
   */
  readOnly?: boolean;
  /**
   * Names the session while the statement runs (Postgres application_name, a leading comment on
   * MySQL), so a later attempt of the same workflow step can find and end it (SessionControl).
   * The connection is closed afterwards rather than lent to anyone else under that name.
   */
  tag?: string;
  /**
   * Runs the statement in a transaction and leaves it prepared under this id (two-phase commit:
   * PREPARE TRANSACTION, XA PREPARE) instead of committing it; SessionControl.finish settles it.
   * Only where SessionControl.twoPhase() is true.
   */
  prepareAs?: string;
  /**
   * Reads the rows a write will touch in the write's own transaction, before it (governance/undo/):
   * Postgres in REPEATABLE READ, so the write sees the snapshot the read locked; MySQL with a
   * locking read, whose next-key locks keep rows out of the range until commit. Not with
   * `prepareAs` or `readOnly`.
   */
  backup?: BackupStep;
}

/** The service's own read of the rows a write touches, kept before the write commits. */
export interface BackupStep {
  /**
   * The read of the rows (MySQL: a SELECT … FOR UPDATE; Postgres: one row aggregating them);
   * bound with `params` (the write's own parameters).
   */
  select: string;
  params: ParamValue[];
  /** More rows than this: nothing is written, and the execution fails with code BACKUP_LIMIT. */
  maxRows: number;
  /** How many rows the read met, from its answer (held against `maxRows`). */
  readRows(rows: unknown[][]): number;
  /**
   * Called with the rows read as soon as they are read, while the write runs (adapters/backup.ts).
   * `written` resolves true once the write ran, before its transaction commits: only then may what
   * keeps the rows commit; it resolves false when the write failed, and then nothing may be kept.
   * A throw rolls the write back, so no write commits without its rows kept.
   */
  save(rows: unknown[][], written: Promise<boolean>): Promise<void>;
}

/**
 * What exactly-once workflow steps need of an engine (governance/once.ts): ending the sessions of
 * earlier attempts by their tag, and finding and settling prepared transactions by id.
 */
export interface SessionControl {
  /** Whether this credential can prepare transactions (Postgres: max_prepared_transactions > 0). */
  twoPhase(): Promise<boolean>;
  /** Ends every session whose tag starts with `prefix` and waits up to `waitMs` until all are gone. */
  endTagged(prefix: string, waitMs: number): Promise<void>;
  /** Ids of the prepared transactions that start with `prefix`. */
  prepared(prefix: string): Promise<string[]>;
  /** COMMIT PREPARED / ROLLBACK PREPARED (XA COMMIT / XA ROLLBACK) of `id`; false: not prepared. */
  finish(id: string, commit: boolean): Promise<boolean>;
}

export interface SchemaColumn {
  name: string;
  type: string;
  nullable: boolean;
}
export interface SchemaTable {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  columns: SchemaColumn[];
}

/** One open pool for one credential of one database. */
export interface AdapterPool {
  /** Opens a connection and runs a trivial statement; throws the driver's own error on failure. */
  check(): Promise<void>;
  /** Runs one statement with bound parameters in the adapter's placeholder style. */
  execute(sql: string, params: ParamValue[], options: ExecuteOptions): Promise<QueryResult>;
  /** Tables, views and their columns, for schema browsing (MCP). */
  readSchema(): Promise<SchemaTable[]>;
  close(): Promise<void>;
  /** Postgres and MySQL only; engines without it run workflow writes at least once. */
  sessions?: SessionControl;
}

/** An engine: makes pools from connection configs. */
export interface Adapter {
  name: AdapterName;
  /** The placeholder for the 1-based parameter `index` (`$1`, `?`, `{p1:String}`, `@p1`, `:1`). */
  placeholder(index: number, value: ParamValue): string;
  connect(config: ConnectionConfig): AdapterPool;
}
