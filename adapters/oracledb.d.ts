// The part of node-oracledb 6+ the Oracle adapter uses. The package ships no type declarations
// and @types/oracledb is not installed; these follow the node-oracledb documentation.
declare module 'oracledb' {
  /** A database type constant such as DB_TYPE_NUMBER. */
  export interface DbType {
    name: string;
    num: number;
  }

  /** Column metadata of a query result (also passed to fetchTypeHandler). */
  export interface Metadata {
    name: string;
    dbType?: DbType;
    dbTypeName?: string;
    precision?: number;
    scale?: number;
    nullable?: boolean;
  }

  export interface FetchTypeResult {
    type?: DbType;
    converter?: (value: unknown) => unknown;
  }

  export interface ExecuteOptions {
    outFormat?: number;
    maxRows?: number;
    autoCommit?: boolean;
    fetchTypeHandler?: (metadata: Metadata) => FetchTypeResult | undefined;
  }

  export interface Result<T> {
    rows?: T[];
    metaData?: Metadata[];
    rowsAffected?: number;
    warning?: { message: string; code?: string };
  }

  export interface Connection {
    /** Milliseconds for each round trip of the next calls; 0 is none. */
    callTimeout: number;
    execute<T = unknown[]>(sql: string, binds: unknown[], options: ExecuteOptions): Promise<Result<T>>;
    /** Ends the connection's transaction, undoing it. */
    rollback(): Promise<void>;
    close(options?: { drop?: boolean }): Promise<void>;
  }

  export interface Pool {
    getConnection(): Promise<Connection>;
    close(drainTime?: number): Promise<void>;
  }

  /** Thin-mode connection attributes used by the adapter. */
  export interface ConnectionAttributes {
    user: string;
    password: string;
    connectString: string;
    /** Seconds to establish the connection. */
    connectTimeout?: number;
    walletContent?: string;
    sslServerDNMatch?: boolean;
  }

  export interface PoolAttributes extends ConnectionAttributes {
    poolMin?: number;
    poolMax?: number;
    poolIncrement?: number;
    /** Seconds an idle connection stays open. */
    poolTimeout?: number;
    /** Milliseconds a getConnection() may wait for a free connection. */
    queueTimeout?: number;
  }

  interface OracleDb {
    readonly thin: boolean;
    readonly OUT_FORMAT_ARRAY: number;
    readonly OUT_FORMAT_OBJECT: number;
    readonly DB_TYPE_NUMBER: DbType;
    readonly DB_TYPE_DATE: DbType;
    readonly DB_TYPE_TIMESTAMP: DbType;
    readonly DB_TYPE_CLOB: DbType;
    readonly DB_TYPE_NCLOB: DbType;
    readonly DB_TYPE_BLOB: DbType;
    readonly DB_TYPE_VARCHAR: DbType;
    readonly DB_TYPE_RAW: DbType;
    createPool(attrs: PoolAttributes): Promise<Pool>;
    getConnection(attrs: ConnectionAttributes): Promise<Connection>;
  }

  const oracledb: OracleDb;
  export default oracledb;
}
