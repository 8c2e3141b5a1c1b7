// The adapters behind one interface (DESIGN.md "Layout": adapters/ imports drivers only).
// PostgreSQL's driver is the store's too, so its adapter loads at once; every other engine's
// module (and with it its driver: mysql2, @clickhouse/client, mssql, oracledb) loads on the first
// connection to such a database, not when a process starts.
import { AdapterError } from './errors.ts';
import { PLACEHOLDERS } from './placeholders.ts';
import { postgresAdapter } from './postgres.ts';
import { PoolRegistry } from './registry.ts';
import type { Adapter, AdapterName, AdapterPool, ConnectionConfig, SessionControl } from './types.ts';

const LOADERS: Record<Exclude<AdapterName, 'postgres'>, () => Promise<Adapter>> = {
  mysql: async () => (await import('./mysql.ts')).mysqlAdapter,
  clickhouse: async () => (await import('./clickhouse.ts')).clickhouseAdapter,
  sqlserver: async () => (await import('./sqlserver.ts')).sqlserverAdapter,
  oracle: async () => (await import('./oracle.ts')).oracleAdapter,
};

/** An adapter whose module is imported by the first pool that runs a call. */
function lazyAdapter(name: AdapterName, load: () => Promise<Adapter>): Adapter {
  let loaded: Promise<Adapter> | null = null;
  return {
    name,
    placeholder: PLACEHOLDERS[name],
    connect: (config) => new LazyPool(() => (loaded ??= load()), config),
  };
}

/** A pool that opens the real one on its first call; closing one never used loads nothing. */
class LazyPool implements AdapterPool {
  private pool: Promise<AdapterPool> | null = null;

  constructor(
    private readonly load: () => Promise<Adapter>,
    private readonly config: ConnectionConfig,
  ) {}

  private open(): Promise<AdapterPool> {
    this.pool ??= this.load().then((adapter) => adapter.connect(this.config));
    return this.pool;
  }

  async check(): Promise<void> {
    return (await this.open()).check();
  }
  async execute(...args: Parameters<AdapterPool['execute']>): ReturnType<AdapterPool['execute']> {
    return (await this.open()).execute(...args);
  }
  async readSchema(): ReturnType<AdapterPool['readSchema']> {
    return (await this.open()).readSchema();
  }
  async close(): Promise<void> {
    if (this.pool) await (await this.pool).close();
  }

  /** The loaded pool's; an engine without it has no two-phase commit and no tagged sessions. */
  readonly sessions: SessionControl = {
    twoPhase: async () => (await this.open()).sessions?.twoPhase() ?? false,
    endTagged: async (prefix, waitMs) => (await this.open()).sessions?.endTagged(prefix, waitMs),
    prepared: async (prefix) => (await this.open()).sessions?.prepared(prefix) ?? [],
    finish: async (id, commit) => (await this.open()).sessions?.finish(id, commit) ?? false,
  };
}

const ADAPTER_BY_NAME: Record<AdapterName, Adapter> = {
  postgres: postgresAdapter,
  mysql: lazyAdapter('mysql', LOADERS.mysql),
  clickhouse: lazyAdapter('clickhouse', LOADERS.clickhouse),
  sqlserver: lazyAdapter('sqlserver', LOADERS.sqlserver),
  oracle: lazyAdapter('oracle', LOADERS.oracle),
};

/** The adapter for a database's `adapter` field (SPEC.md 2.2). */
export function adapterFor(name: AdapterName): Adapter {
  const adapter = Object.hasOwn(ADAPTER_BY_NAME, name) ? ADAPTER_BY_NAME[name] : undefined;
  if (!adapter) throw new AdapterError(`unknown adapter: ${String(name)}`, 'config');
  return adapter;
}

/** A pool registry over the real adapters. */
export function createPoolRegistry(): PoolRegistry {
  return new PoolRegistry(adapterFor);
}

export type { AdapterErrorKind } from './errors.ts';
export { type PoolKey, PoolRegistry } from './registry.ts';
export * from './types.ts';
export { AdapterError, postgresAdapter };
