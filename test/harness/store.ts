// A fresh database for the service's own store, one per test file, on the harness PostgreSQL.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { SqlServer } from './servers.ts';

export interface TestStore {
  /** postgres:// URL for the password user, plain TCP (no TLS). */
  url: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
}

/**
 * Creates a uniquely named empty database. `pg` defaults to the harness server (vitest inject);
 * benchmarks pass the one startServers() returned.
 */
export async function createTestStore(pg?: SqlServer, options: { ctype?: string } = {}): Promise<TestStore> {
  const server = pg ?? (await import('./servers.ts')).servers().postgres;
  const name = `cs_store_${randomBytes(6).toString('hex')}`;
  const admin = () =>
    postgres({
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: server.database,
      max: 1,
      onnotice: () => {},
    });

  const sql = admin();
  try {
    // A character-type locale other than the cluster's C: what lower() folds follows it, as on
    // a server installed with a UTF-8 locale.
    if (options.ctype) {
      if (!/^[\w.@-]+$/.test(options.ctype)) throw new Error(`bad locale name ${options.ctype}`);
      await sql.unsafe(
        `create database "${name}" template template0 encoding 'UTF8' lc_collate 'C' lc_ctype '${options.ctype}'`,
      );
    } else await sql`create database ${sql(name)}`;
  } finally {
    await sql.end({ timeout: 5 });
  }

  const auth = `${encodeURIComponent(server.user)}:${encodeURIComponent(server.password)}`;
  return {
    url: `postgres://${auth}@${server.host}:${server.port}/${name}`,
    async drop() {
      const sql = admin();
      try {
        // WITH (FORCE) (PostgreSQL 13+): a pool the test forgot to close must not keep it alive.
        await sql`drop database if exists ${sql(name)} with (force)`;
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}
