import postgres from 'postgres';
import { AuditLane } from './audit-lane.ts';

/** The postgres.js client of the service's own store. Store functions take it first (STYLE.md 9). */
export type Sql = postgres.Sql<{ bigint: bigint }>;
/** A client or a transaction: store functions accept either so calls compose in `sql.begin`. */
export type Tx = postgres.Sql<{ bigint: bigint }> | postgres.TransactionSql<{ bigint: bigint }>;

export interface StoreOptions {
  /**
   * Pool size; dev mode's PGlite serves one connection at a time. A pool of more than one opens
   * one more connection, for audit batches.
   */
  max?: number;
}

const auditLanes = new WeakMap<Sql, AuditLane<Sql>>();

/** The connection `pool` sends audit batches over when it can (store/audit-writer.ts), if any. */
export function auditLaneOf(pool: Sql): AuditLane<Sql> | undefined {
  return auditLanes.get(pool);
}

/**
 * Opens the store. Timestamps come back as Date; bigint counts as numbers. A pool of more than
 * one connection gets one more for audit appends (store/audit-writer.ts), ended with it.
 */
export function openStore(url: string, options: StoreOptions = {}): Sql {
  const max = options.max ?? 10;
  const pool = connect(url, max, 'countersign');
  if (max > 1) {
    const lane = new AuditLane(
      () => connect(url, 1, 'countersign-audit'),
      (client) => client`select 1`,
    );
    auditLanes.set(pool, lane);
    const endPool = pool.end;
    pool.end = async (opts) => {
      await Promise.all([endPool(opts), lane.end(opts)]);
    };
  }
  return pool;
}

function connect(url: string, max: number, applicationName: string): Sql {
  return postgres(url, {
    max,
    onnotice: () => {},
    // Errors keep query and parameters non-enumerable (postgres.js default); never log them.
    types: { bigint: postgres.BigInt },
    connection: { application_name: applicationName },
    // While the store is unreachable a request waits at most for the next connect attempt, and
    // then answers 503 (core/store-outage.ts): the driver's default backoff grows to 20 s between
    // attempts and its connect timeout is 30 s.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    connect_timeout: 5,
  }) as unknown as Sql;
}
