import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any fixed number: serializes concurrent starts of several api/worker replicas.
const LOCK_KEY = 0x636f756e;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads `NNNN_name.sql` files in version order. */
export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(dir + file, 'utf8'),
    })),
  );
}

/**
 * The store was migrated by a newer release than this process: its code does not know the
 * newer tables and rules (a newer migration may add restrictions this code would ignore), so it
 * must not run against it. Roll forward, or restore the store from before the upgrade.
 */
export class StoreTooNewError extends Error {
  constructor(
    readonly storeVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `the store is at migration ${pad(storeVersion)}, newer than this release knows (up to ${pad(knownVersion)}): ` +
        'run the release that migrated it (or a later one); an older release must not run against a newer store',
    );
    this.name = 'StoreTooNewError';
  }
}

const pad = (v: number) => String(v).padStart(4, '0');

/**
 * Applies every migration not yet recorded, each in its own transaction, in order.
 * Forward-only: there are no down migrations; a released migration is never edited.
 * Returns the versions applied now.
 */
export async function migrate(
  sql: Sql,
  migrations?: Migration[],
  onApplied: (m: Migration) => void = () => {},
): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  const known = Math.max(0, ...all.map((m) => m.version));
  const applied = await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    await tx`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const rows = await tx<{ version: number }[]>`select version from schema_migrations`;
    const done = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...done);
    if (newest > known) throw new StoreTooNewError(newest, known);
    const applied: Migration[] = [];
    for (const m of all) {
      if (done.has(m.version)) continue;
      // Migrations are trusted SQL files shipped with the code: the one place for unsafe().
      await tx.unsafe(m.sql);
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m);
    }
    return applied;
  });
  // Said once committed: a failed migration rolls back every one of this run.
  for (const m of applied) onApplied(m);
  return applied.map((m) => m.version);
}
