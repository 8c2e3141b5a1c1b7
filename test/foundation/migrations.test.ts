import { describe, expect, it } from 'vitest';
import { openStore } from '../../store/db.ts';
import { loadMigrations, migrate } from '../../store/migrate.ts';
import { createTestStore } from '../harness/store.ts';

describe('store migrations', () => {
  it('apply from empty, in order, once; concurrent starts do not collide', async () => {
    const store = await createTestStore();
    const a = openStore(store.url, { max: 2 });
    const b = openStore(store.url, { max: 2 });
    try {
      const all = await loadMigrations();
      expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort((x, y) => x - y));
      const [first, second] = await Promise.all([migrate(a), migrate(b)]);
      // One process applied everything; the other found nothing left to do.
      expect([...first!, ...second!].sort((x, y) => x - y)).toEqual(all.map((m) => m.version));
      const recorded = await a<{ version: number }[]>`select version from schema_migrations order by version`;
      expect(recorded.map((r) => r.version)).toEqual(all.map((m) => m.version));
      expect(await migrate(a)).toEqual([]);
      const tables = await a<{ table_name: string }[]>`
        select table_name from information_schema.tables where table_schema = 'public' order by table_name`;
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining([
          'organizations',
          'users',
          'api_keys',
          'personal_tokens',
          'sessions',
          'schema_migrations',
        ]),
      );
    } finally {
      await a.end();
      await b.end();
      await store.drop();
    }
  });

  it('a failing migration rolls back whole and records nothing', async () => {
    const store = await createTestStore();
    const sql = openStore(store.url, { max: 1 });
    try {
      const bad = [
        { version: 1, name: 'broken', sql: 'create table ok_table (id int); select no_such_function();' },
      ];
      await expect(migrate(sql, bad)).rejects.toThrow(/no_such_function/);
      const [row] = await sql`select to_regclass('ok_table') as t`;
      expect(row!.t).toBeNull();
    } finally {
      await sql.end();
      await store.drop();
    }
  });
});
