// Whether a write can be undone, and the read that keeps its rows: the table must be a base table
// with a primary key the write does not change, and the write an UPDATE or DELETE of one table.
import type { AdapterName, BackupStep, ParamValue } from '../../adapters/types.ts';
import type { CredentialRow, DatabaseRow } from '../../store/databases.ts';
import { poolFor } from '../connections.ts';
import { DEFAULT_TIMEOUT_SECONDS } from '../execute.ts';
import type { GovernanceDeps } from '../types.ts';
import { keptColumns, pgId, rowsRead, type SavedWrite, writeTarget } from './statements.ts';

export type UndoPlan =
  | { kind: 'backup'; adapter: AdapterName; write: SavedWrite; select: (limit: number) => string }
  | { kind: 'none'; reason: string };

const PG_TABLE = `
  select n.nspname, c.relname, c.relkind in ('r', 'p') as is_table
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
   where c.oid = to_regclass($1)`;
const PG_COLUMNS = `
  select a.attname, a.attgenerated <> '' as generated,
         coalesce(a.attnum = any(i.indkey), false) as is_key
    from pg_catalog.pg_attribute a
    left join pg_catalog.pg_index i on i.indrelid = a.attrelid and i.indisprimary
   where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped
   order by a.attnum`;
const MY_COLUMNS = `
  SELECT c.TABLE_SCHEMA, c.COLUMN_NAME, c.EXTRA LIKE '%GENERATED%' AS is_generated,
         EXISTS (SELECT 1 FROM information_schema.STATISTICS s
                  WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
                    AND s.INDEX_NAME = 'PRIMARY' AND s.COLUMN_NAME = c.COLUMN_NAME) AS is_key,
         t.TABLE_TYPE = 'BASE TABLE' AS is_table
    FROM information_schema.COLUMNS c
    JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
   WHERE c.TABLE_SCHEMA = COALESCE(?, DATABASE()) AND c.TABLE_NAME = ?
   ORDER BY c.ORDINAL_POSITION`;

/** How `statement` would be kept for undo on `db` through `cred`, or why it cannot be. */
export async function undoPlan(
  deps: GovernanceDeps,
  db: DatabaseRow,
  cred: CredentialRow,
  statement: string,
): Promise<UndoPlan> {
  const target = await writeTarget(db.adapter, statement);
  if (target.kind === 'none') return target;
  const pool = poolFor(deps, db, cred);
  const opts = { maxRows: 10_000, timeoutSeconds: cred.timeout ?? DEFAULT_TIMEOUT_SECONDS, readOnly: true };
  let schema: string;
  let name = target.name;
  let columns: Array<{ name: string; generated: boolean; key: boolean }>;
  const truthy = (v: unknown) => v === true || Number(v) === 1;
  try {
    if (db.adapter === 'postgres') {
      const qualified = target.schema ? `${pgId(target.schema)}.${pgId(target.name)}` : pgId(target.name);
      const rel = (await pool.execute(PG_TABLE, [qualified], opts)).rows[0];
      if (!rel) return { kind: 'none', reason: `table ${target.name} was not found` };
      if (!truthy(rel[2])) return { kind: 'none', reason: `${target.name} is not a table` };
      schema = String(rel[0]);
      name = String(rel[1]);
      const rows = (await pool.execute(PG_COLUMNS, [qualified], opts)).rows;
      columns = rows.map((r) => ({ name: String(r[0]), generated: truthy(r[1]), key: truthy(r[2]) }));
    } else {
      const rows = (await pool.execute(MY_COLUMNS, [target.schema, target.name], opts)).rows;
      if (rows.length === 0) return { kind: 'none', reason: `table ${target.name} was not found` };
      if (!truthy(rows[0]![4])) return { kind: 'none', reason: `${target.name} is not a table` };
      schema = String(rows[0]![0]);
      columns = rows.map((r) => ({ name: String(r[1]), generated: truthy(r[2]), key: truthy(r[3]) }));
    }
  } catch {
    return { kind: 'none', reason: `the definition of ${target.name} could not be read` };
  }
  const keys = columns.filter((c) => c.key).map((c) => c.name);
  if (keys.length === 0) return { kind: 'none', reason: `${name} has no primary key to put rows back by` };
  const lower = new Set(target.assigned.map((a) => a.toLowerCase()));
  if (keys.some((k) => lower.has(k.toLowerCase())))
    return { kind: 'none', reason: 'the write changes the primary key' };
  // Generated columns are computed again by the database; they are never written back.
  const writable = columns.filter((c) => !c.generated).map((c) => c.name);
  const byName = new Map(writable.map((c) => [c.toLowerCase(), c]));
  const assigned = target.assigned.map((a) => byName.get(a.toLowerCase()) ?? a);
  const write: SavedWrite = { verb: target.verb, schema, name, keys, columns: writable, assigned };
  return {
    kind: 'backup',
    adapter: db.adapter,
    write,
    select: (limit) => target.select(keptColumns(write), limit),
  };
}

/** The backup step of an execution (adapters/types.ts BackupStep). */
export function backupStep(
  plan: Extract<UndoPlan, { kind: 'backup' }>,
  params: ParamValue[],
  maxRows: number,
  save: BackupStep['save'],
): BackupStep {
  const adapter = plan.adapter;
  return {
    // One row past the limit is read, so a write above it is told apart from one at it.
    select: plan.select(maxRows + 1),
    params,
    maxRows,
    readRows: (rows) => rowsRead(adapter, rows),
    save,
  };
}
