import postgres from 'postgres';

/** The postgres.js client of the service's own store. Store functions take it first (STYLE.md 9). */
export type Sql = postgres.Sql<{ bigint: bigint }>;
/** A client or a transaction: store functions accept either so calls compose in `sql.begin`. */
export type Tx = postgres.Sql<{ bigint: bigint }> | postgres.TransactionSql<{ bigint: bigint }>;

export interface StoreOptions {
  /** Pool size; dev mode's PGlite serves one connection at a time. */
  max?: number;
}

/** Opens the store. Timestamps come back as Date; bigint counts as numbers. */
export function openStore(url: string, options: StoreOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // Errors keep query and parameters non-enumerable (postgres.js default); never log them.
    types: { bigint: postgres.BigInt },
    connection: { application_name: 'countersign' },
  }) as unknown as Sql;
}
