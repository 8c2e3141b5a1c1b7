// The adapters behind one interface (DESIGN.md "Layout": adapters/ imports drivers only).
import { clickhouseAdapter } from './clickhouse.ts';
import { AdapterError } from './errors.ts';
import { mysqlAdapter } from './mysql.ts';
import { oracleAdapter } from './oracle.ts';
import { postgresAdapter } from './postgres.ts';
import { PoolRegistry } from './registry.ts';
import { sqlserverAdapter } from './sqlserver.ts';
import type { Adapter, AdapterName } from './types.ts';

const ADAPTER_BY_NAME: Record<AdapterName, Adapter> = {
  postgres: postgresAdapter,
  mysql: mysqlAdapter,
  clickhouse: clickhouseAdapter,
  sqlserver: sqlserverAdapter,
  oracle: oracleAdapter,
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
export { AdapterError, clickhouseAdapter, mysqlAdapter, oracleAdapter, postgresAdapter, sqlserverAdapter };
