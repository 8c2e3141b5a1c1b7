// The target database's relations and columns, as the credential sees them, read with a fixed
// catalog query (no user value in it) through the credential's own pool and cached briefly.
// The rewriter resolves every column reference against it; anything it does not list is refused.
import type { AdapterPool } from '../adapters/types.ts';

export interface ColumnInfo {
  name: string;
  /** SQL type text (format_type / COLUMN_TYPE), used to type a hidden column's NULL. */
  type: string;
  /** Postgres attnum (1-based); MySQL ordinal position. */
  number: number;
}

export interface RelationInfo {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  /**
   * Postgres: a partition or an inheriting child, whose rows a scan of its parent also reads,
   * under the parent's name (and so its rules).
   */
  inherits?: boolean;
  /** Postgres pg_class oid, for result-column sources; null on MySQL. */
  oid: number | null;
  columns: ColumnInfo[];
}

/**
 * The functions and operators a statement could call, by name: those built into the server
 * (Postgres: schema pg_catalog; MySQL: not listed, the rewriter knows them) and those defined
 * by users (any other schema; MySQL: stored functions of the current database).
 */
export interface Routines {
  builtinFunctions: ReadonlySet<string>;
  userFunctions: ReadonlySet<string>;
  builtinOperators: ReadonlySet<string>;
  userOperators: ReadonlySet<string>;
}

/** What the rewriter knows of one database. */
export class DbSchema {
  private readonly byName = new Map<string, RelationInfo>();
  readonly byOid = new Map<number, RelationInfo>();

  constructor(
    readonly relations: RelationInfo[],
    /** Schemas an unqualified name is looked up in, in order (Postgres search_path; MySQL the current database). */
    readonly searchPath: string[],
    private readonly foldCase: boolean,
    /** Null when not read (unit tests): the rewriter then falls back on its own lists. */
    readonly routines: Routines | null = null,
  ) {
    for (const r of relations) {
      this.byName.set(this.key(r.schema, r.name), r);
      if (r.oid !== null) this.byOid.set(r.oid, r);
    }
  }

  private key(schema: string, name: string): string {
    const k = `${schema}\u0000${name}`;
    return this.foldCase ? k.toLowerCase() : k;
  }

  /** The relation a (possibly unqualified) name denotes, or null when the schema has none. */
  find(schema: string | null, name: string): RelationInfo | null {
    if (schema !== null) return this.byName.get(this.key(schema, name)) ?? null;
    for (const s of this.searchPath) {
      const r = this.byName.get(this.key(s, name));
      if (r) return r;
    }
    return null;
  }
}

const TTL_MS = 30_000;
const READ_TIMEOUT_SECONDS = 15;
const MAX_COLUMNS = 200_000;

// pg_catalog and information_schema are deliberately absent: a reference to them is then an
// unknown relation and refused. current_schemas(false) is the effective search_path.
const PG_CATALOG_QUERY = `
select n.nspname, c.relname,
       case when c.relkind in ('v', 'm') then 'view'
            when c.relispartition or exists (select 1 from pg_catalog.pg_inherits i where i.inhrelid = c.oid)
            then 'child' else 'table' end,
       c.oid::int8::text, a.attname, a.attnum::int,
       format_type(a.atttypid, a.atttypmod), to_json(current_schemas(false))::text
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
  join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
 where c.relkind in ('r', 'p', 'v', 'm', 'f')
   and n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%'
 order by n.nspname, c.relname, a.attnum`;

// Only the connection's own database: a name qualified with another database is unknown.
const MYSQL_CATALOG_QUERY = `
SELECT c.TABLE_SCHEMA, c.TABLE_NAME, t.TABLE_TYPE = 'VIEW', '', c.COLUMN_NAME, c.ORDINAL_POSITION,
       c.COLUMN_TYPE, DATABASE()
  FROM information_schema.COLUMNS c
  JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
 WHERE c.TABLE_SCHEMA = DATABASE()
 ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`;

// Function and operator names, built-in (pg_catalog) or not; pg_toast, pg_temp_N and
// information_schema are left out (unqualified calls never reach them).
const PG_ROUTINES_QUERY = `
select distinct 'f', n.nspname = 'pg_catalog', p.proname
  from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
 where n.nspname = 'pg_catalog' or (n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%')
union all
select distinct 'o', n.nspname = 'pg_catalog', o.oprname
  from pg_catalog.pg_operator o join pg_catalog.pg_namespace n on n.oid = o.oprnamespace
 where n.nspname = 'pg_catalog' or (n.nspname <> 'information_schema' and n.nspname not like 'pg\\_%')`;

const MYSQL_ROUTINES_QUERY = `
SELECT 'f', 0, LOWER(ROUTINE_NAME) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()`;

async function readRoutines(pool: AdapterPool, dialect: 'postgres' | 'mysql'): Promise<Routines> {
  const result = await pool.execute(dialect === 'postgres' ? PG_ROUTINES_QUERY : MYSQL_ROUTINES_QUERY, [], {
    maxRows: MAX_COLUMNS,
    timeoutSeconds: READ_TIMEOUT_SECONDS,
  });
  const sets = {
    builtinFunctions: new Set<string>(),
    userFunctions: new Set<string>(),
    builtinOperators: new Set<string>(),
    userOperators: new Set<string>(),
  };
  for (const [kind, builtin, name] of result.rows) {
    const isBuiltin = builtin === true || builtin === 1 || builtin === '1' || builtin === 't';
    const set =
      kind === 'o'
        ? isBuiltin
          ? sets.builtinOperators
          : sets.userOperators
        : isBuiltin
          ? sets.builtinFunctions
          : sets.userFunctions;
    set.add(String(name));
  }
  if (result.truncated) throw new Error('the schema has too many functions to protect');
  return sets;
}

/** Reads the schema of a Postgres or MySQL/MariaDB database through one of its pools. */
export async function readDbSchema(pool: AdapterPool, dialect: 'postgres' | 'mysql'): Promise<DbSchema> {
  const result = await pool.execute(dialect === 'postgres' ? PG_CATALOG_QUERY : MYSQL_CATALOG_QUERY, [], {
    maxRows: MAX_COLUMNS,
    timeoutSeconds: READ_TIMEOUT_SECONDS,
  });
  const relations = new Map<string, RelationInfo>();
  let searchPath: string[] = [];
  for (const row of result.rows) {
    const [schema, name, kind, oid, column, number, type, path] = row.map((v) =>
      v === null ? '' : String(v),
    );
    const key = `${schema}\u0000${name}`;
    let rel = relations.get(key);
    if (!rel) {
      rel = {
        schema: schema!,
        name: name!,
        // Postgres names the kind; MySQL answers whether it is a view (1 or 0).
        kind: kind === 'view' || kind === '1' ? 'view' : 'table',
        ...(kind === 'child' ? { inherits: true } : {}),
        oid: oid ? Number(oid) : null,
        columns: [],
      };
      relations.set(key, rel);
    }
    rel.columns.push({ name: column!, type: type!, number: Number(number) });
    if (searchPath.length === 0 && path)
      searchPath = dialect === 'postgres' ? (JSON.parse(path) as string[]) : [path];
  }
  if (result.truncated) throw new Error('the schema has too many columns to protect');
  const routines = await readRoutines(pool, dialect);
  return new DbSchema([...relations.values()], searchPath, dialect === 'mysql', routines);
}

/** Schemas cached per credential and pool version, for a short time. */
export class SchemaCache {
  private readonly entries = new Map<string, { at: number; schema: Promise<DbSchema> }>();

  constructor(private readonly ttlMs = TTL_MS) {}

  get(key: string, load: () => Promise<DbSchema>, fresh = false): Promise<DbSchema> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && !fresh && now - hit.at < this.ttlMs) return hit.schema;
    const schema = load();
    this.entries.set(key, { at: now, schema });
    // A failed read is not cached.
    schema.catch(() => {
      if (this.entries.get(key)?.schema === schema) this.entries.delete(key);
    });
    if (this.entries.size > 1000) this.sweep(now);
    return schema;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.entries) if (now - v.at >= this.ttlMs) this.entries.delete(k);
  }
}
