// Read or write, decided by parsing the statement with a real parser for its dialect: libpg-query
// (PostgreSQL's own parser) for postgres, node-sql-parser for the others. Whatever cannot be
// parsed counts as a write, and several statements take the strictest class (fail closed).
import type { AdapterName } from '../adapters/types.ts';
import { astify, loadPostgresParser, parsePostgres } from './parse.ts';

export type StatementClass = 'read' | 'write';

/**
 * Functions that change state although they are called from a SELECT. A user-defined function
 * with side effects is not known here: the credential's own privileges stay the last line.
 */
const SIDE_EFFECT_FUNCTIONS = new Set([
  // PostgreSQL
  'nextval',
  'setval',
  'set_config',
  'pg_terminate_backend',
  'pg_cancel_backend',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_switch_wal',
  'pg_promote',
  'pg_create_restore_point',
  'pg_create_physical_replication_slot',
  'pg_create_logical_replication_slot',
  'pg_drop_replication_slot',
  'pg_advisory_lock',
  'pg_advisory_xact_lock',
  'pg_try_advisory_lock',
  'pg_try_advisory_xact_lock',
  'pg_advisory_lock_shared',
  'pg_advisory_unlock',
  'pg_advisory_unlock_all',
  'pg_notify',
  'lo_import',
  'lo_export',
  'lo_unlink',
  'lo_create',
  'lo_put',
  'lo_from_bytea',
  'dblink_exec',
  'dblink',
  // MySQL / MariaDB
  'get_lock',
  'release_lock',
  'release_all_locks',
]);

/** PostgreSQL node kinds that write (or lock rows for writing) wherever they occur. */
const PG_WRITE_NODES = new Set([
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'intoClause',
  'LockingClause',
]);

const CACHE_LIMIT = 2000;
const CACHEABLE_CHARS = 16 * 1024;
const cache = new Map<string, StatementClass>();

/** Read or write for `statement` on `adapter` (DESIGN.md pipeline step 2; governance/README.md). */
export async function classifyStatement(adapter: AdapterName, statement: string): Promise<StatementClass> {
  const key = `${adapter}\u0000${statement}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let out: StatementClass;
  if (adapter === 'postgres') {
    await loadPostgresParser();
    out = classifyPostgres(statement);
  } else {
    out = classifyOther(adapter, statement);
  }
  // Dashboards and workflows repeat the same text: parsing once is enough (a bounded map, oldest out).
  // Long statements are not kept: 2000 keys of up to 100 KB each would hold 200 MB of text.
  if (statement.length > CACHEABLE_CHARS) return out;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, out);
  return out;
}

function classifyPostgres(statement: string): StatementClass {
  let stmts: Array<{ stmt?: Record<string, unknown> }>;
  try {
    stmts = parsePostgres(statement).stmts ?? [];
  } catch {
    return 'write';
  }
  if (stmts.length === 0) return 'write';
  return strictest(stmts.map((s) => (s.stmt ? pgStatementClass(s.stmt) : 'write')));
}

function pgStatementClass(stmt: Record<string, unknown>): StatementClass {
  const [kind, node] = Object.entries(stmt)[0] ?? [];
  switch (kind) {
    case 'SelectStmt':
      return writes(node, pgWriteNode) ? 'write' : 'read';
    case 'VariableShowStmt':
      return 'read';
    case 'ExplainStmt': {
      // Plain EXPLAIN only plans; EXPLAIN ANALYZE runs the statement, so it takes its class.
      const explain = node as { query?: Record<string, unknown>; options?: unknown[] };
      const analyze = JSON.stringify(explain.options ?? []).includes('"defname":"analyze"');
      return analyze && explain.query ? pgStatementClass(explain.query) : 'read';
    }
    default:
      return 'write';
  }
}

function pgWriteNode(key: string, value: unknown): boolean {
  if (PG_WRITE_NODES.has(key)) return true;
  if (key !== 'FuncCall') return false;
  const names = (value as { funcname?: Array<{ String?: { sval?: string } }> }).funcname ?? [];
  const name = names.at(-1)?.String?.sval?.toLowerCase();
  return name !== undefined && SIDE_EFFECT_FUNCTIONS.has(name);
}

/** node-sql-parser dialects to try per adapter (it has none for ClickHouse or Oracle: MySQL is closest). */
const DIALECTS: Record<Exclude<AdapterName, 'postgres'>, string[]> = {
  mysql: ['MariaDB', 'MySQL'],
  sqlserver: ['TransactSQL'],
  clickhouse: ['MySQL'],
  oracle: ['MySQL'],
};

/**
 * Placeholders the parser does not know become NULL before parsing: they stand only where a
 * value stands, so the statement's class cannot change.
 */
const PLACEHOLDERS: Partial<Record<AdapterName, RegExp>> = {
  clickhouse: /\{[A-Za-z_][A-Za-z0-9_]*:[^{}]+\}/g,
  sqlserver: /@p\d+\b/g,
  oracle: /:\d+\b/g,
};

function classifyOther(adapter: Exclude<AdapterName, 'postgres'>, statement: string): StatementClass {
  const pattern = PLACEHOLDERS[adapter];
  const text = pattern ? statement.replace(pattern, 'NULL') : statement;
  for (const database of DIALECTS[adapter]) {
    let ast: unknown;
    try {
      ast = astify(text, database);
    } catch {
      continue;
    }
    const list = (Array.isArray(ast) ? ast : [ast]) as Array<Record<string, unknown>>;
    if (list.length === 0) return 'write';
    return strictest(list.map(genericStatementClass));
  }
  return 'write';
}

const GENERIC_READS = new Set(['select', 'show', 'desc', 'explain']);
const GENERIC_WRITES = new Set(['insert', 'update', 'delete', 'replace', 'merge']);

function genericStatementClass(ast: Record<string, unknown>): StatementClass {
  if (typeof ast.type !== 'string' || !GENERIC_READS.has(ast.type)) return 'write';
  return writes(ast, genericWriteNode) ? 'write' : 'read';
}

function genericWriteNode(key: string, value: unknown): boolean {
  // SELECT … FOR UPDATE / LOCK IN SHARE MODE.
  if (key === 'locking_read') return true;
  if (value === null || typeof value !== 'object') return false;
  const node = value as Record<string, unknown>;
  // SELECT … INTO OUTFILE / @var / table.
  if (key === 'into' && (node.position || node.expr || node.keyword)) return true;
  if (typeof node.type === 'string' && GENERIC_WRITES.has(node.type)) return true;
  if (node.type === 'function') return SIDE_EFFECT_FUNCTIONS.has(functionName(node.name));
  return false;
}

function functionName(name: unknown): string {
  if (typeof name === 'string') return name.toLowerCase();
  const parts = (name as { name?: Array<{ value?: unknown }> } | null)?.name;
  const last = Array.isArray(parts) ? parts.at(-1)?.value : undefined;
  return typeof last === 'string' ? last.toLowerCase() : '';
}

/** True when `isWrite` holds for any key/value pair anywhere in the tree. */
function writes(tree: unknown, isWrite: (key: string, value: unknown) => boolean): boolean {
  if (tree === null || typeof tree !== 'object') return false;
  if (Array.isArray(tree)) return tree.some((item) => writes(item, isWrite));
  for (const [key, value] of Object.entries(tree)) {
    if (value === null || value === undefined) continue;
    if (isWrite(key, value) || writes(value, isWrite)) return true;
  }
  return false;
}

function strictest(classes: StatementClass[]): StatementClass {
  return classes.includes('write') ? 'write' : 'read';
}
