// The SELECTs a write preview runs, built from the write's own parse tree so they read exactly
// the rows the write would touch: a count over the write's FROM and WHERE, and up to 20 of
// those rows with each SET expression evaluated beside them. Nothing here executes anything.
import type { AdapterName } from '../../adapters/types.ts';
import { isObj, nameOf, type Obj } from '../../sql/mysql-tree.ts';
import {
  astify,
  deparsePostgres,
  deparseSelect,
  loadPostgresParser,
  parsePostgres,
  sqlParser,
} from '../../sql/parse.ts';
import { as, type Fields, kindOf, list } from '../../sql/pg-tree.ts';

/** Rows of before/after a preview shows at most. */
export const PREVIEW_ROWS = 20;

/** What a preview can be built as, for one statement. */
export type PreviewPlan =
  | {
      kind: 'rows';
      verb: 'UPDATE' | 'DELETE' | 'INSERT';
      /** Every touched row: the target's columns, then `set:<col>` for each SET expression. */
      select: string;
      /** Columns the write assigns, in the order of their `set:` outputs. */
      assigned: string[];
      /** Volatile functions make the after-values differ from what will be written: count only. */
      volatile: boolean;
      /** Whether the write is limited by a WHERE clause (a risk level when not). */
      filtered: boolean;
    }
  | { kind: 'ddl'; verb: string; relations: Array<{ schema: string | null; name: string }> }
  | { kind: 'none'; reason: string };

/** Functions whose value changes from one call to the next: the preview cannot show their result. */
const VOLATILE = new Set([
  'random',
  'gen_random_uuid',
  'uuid_generate_v4',
  'clock_timestamp',
  'timeofday',
  'nextval',
  'setval',
  'rand',
  'uuid',
  'uuid_short',
  'sysdate',
]);

export async function previewPlan(adapter: AdapterName, statement: string): Promise<PreviewPlan> {
  try {
    if (adapter === 'postgres') return await postgresPlan(statement);
    if (adapter === 'mysql') return mysqlPlan(statement);
  } catch {
    return { kind: 'none', reason: 'the statement could not be read for a preview' };
  }
  return { kind: 'none', reason: `writes on ${adapter} have no preview` };
}

function containsVolatile(tree: unknown, name: (n: Fields) => string | null): boolean {
  const walk = (n: unknown): boolean => {
    if (Array.isArray(n)) return n.some(walk);
    if (!isObj(n)) return false;
    const f = name(n);
    if (f !== null && VOLATILE.has(f.toLowerCase())) return true;
    return Object.values(n).some(walk);
  };
  return walk(tree);
}

async function postgresPlan(statement: string): Promise<PreviewPlan> {
  await loadPostgresParser();
  const stmts = parsePostgres(statement, { copy: true }).stmts ?? [];
  if (stmts.length !== 1) return { kind: 'none', reason: 'a preview is made for one statement only' };
  const stmt = stmts[0]!.stmt;
  const kind = kindOf(stmt) ?? '';
  const f = (stmt as Record<string, Fields>)[kind] ?? {};
  const pgFuncName = (n: Fields) => {
    const call = as(n, 'FuncCall');
    const parts = list(call?.funcname);
    const last = as(parts.at(-1), 'String');
    return typeof last?.sval === 'string' ? last.sval : null;
  };
  const volatile = containsVolatile(stmt, pgFuncName);
  if (f.withClause) return { kind: 'none', reason: 'a write with WITH has no preview' };
  if (kind === 'UpdateStmt' || kind === 'DeleteStmt') {
    const rel = f.relation as Fields;
    const alias = isObj(rel.alias) ? String((rel.alias as Fields).aliasname) : String(rel.relname);
    const from = [{ RangeVar: rel }, ...list(kind === 'UpdateStmt' ? f.fromClause : f.usingClause)];
    const assigned: string[] = [];
    const targets: unknown[] = [
      { ResTarget: { val: { ColumnRef: { fields: [{ String: { sval: alias } }, { A_Star: {} }] } } } },
    ];
    for (const t of list(f.targetList)) {
      const rt = as(t, 'ResTarget')!;
      if (rt.indirection || as(rt.val, 'MultiAssignRef') || as(rt.val, 'SetToDefault'))
        return { kind: 'none', reason: 'this SET form has no preview; the count is not shown either' };
      assigned.push(String(rt.name));
      targets.push({ ResTarget: { name: `set:${String(rt.name)}`, val: rt.val } });
    }
    return {
      kind: 'rows',
      verb: kind === 'UpdateStmt' ? 'UPDATE' : 'DELETE',
      select: deparseSelect(targets, from, f.whereClause),
      assigned,
      volatile,
      filtered: f.whereClause !== undefined,
    };
  }
  if (
    kind === 'InsertStmt' &&
    as(f.selectStmt, 'SelectStmt') &&
    !as(f.selectStmt, 'SelectStmt')!.valuesLists
  ) {
    const inner = deparsePostgres({ stmts: [{ stmt: f.selectStmt }] });
    return { kind: 'rows', verb: 'INSERT', select: inner, assigned: [], volatile, filtered: true };
  }
  if (DDL_KINDS.has(kind))
    return { kind: 'ddl', verb: kind.replace(/Stmt$/, ''), relations: ddlRelations(stmt) };
  return { kind: 'none', reason: 'this statement has no row preview' };
}

const DDL_KINDS = new Set([
  'CreateStmt',
  'CreateTableAsStmt',
  'ViewStmt',
  'AlterTableStmt',
  'IndexStmt',
  'RenameStmt',
  'DropStmt',
  'TruncateStmt',
]);

/** The existing relations a DDL statement names (its `relation`, or a DROP's objects). */
function ddlRelations(stmt: unknown): Array<{ schema: string | null; name: string }> {
  const kind = kindOf(stmt) ?? '';
  const f = (stmt as Record<string, Fields>)[kind] ?? {};
  if (!['AlterTableStmt', 'IndexStmt', 'RenameStmt', 'DropStmt', 'TruncateStmt'].includes(kind)) return [];
  const rvs: Fields[] = [];
  if (isObj(f.relation)) rvs.push(f.relation as Fields);
  for (const r of list(f.relations)) {
    const rv = as(r, 'RangeVar');
    if (rv) rvs.push(rv);
  }
  const out = rvs.map((rv) => ({
    schema: typeof rv.schemaname === 'string' ? rv.schemaname : null,
    name: String(rv.relname),
  }));
  if (kind === 'DropStmt' && f.removeType === 'OBJECT_TABLE') {
    for (const o of list(f.objects)) {
      const parts = list(as(o, 'List')?.items).map((s) => String(as(s, 'String')?.sval ?? ''));
      if (parts.length) out.push({ schema: parts.length > 1 ? parts.at(-2)! : null, name: parts.at(-1)! });
    }
  }
  return out;
}

function mysqlPlan(statement: string): PreviewPlan {
  const ast = astify(statement, 'MariaDB', { copy: true });
  const stmts = Array.isArray(ast) ? ast : [ast];
  if (stmts.length !== 1 || !isObj(stmts[0]))
    return { kind: 'none', reason: 'a preview is made for one statement only' };
  const s = stmts[0] as Obj;
  const myFuncName = (n: Fields) => {
    if (n.type !== 'function' || !isObj(n.name)) return null;
    return nameOf(list((n.name as Obj).name)[0]);
  };
  const volatile = containsVolatile(s, myFuncName);
  const print = (node: unknown) => sqlParser().sqlify(node as never, { database: 'MariaDB' });
  if ((s.type === 'update' || s.type === 'delete') && !s.with) {
    const from = s.type === 'update' ? s.table : s.from;
    const targets = list(s.table);
    const first = isObj(targets[0]) ? targets[0] : null;
    const alias = first ? (nameOf(first.as) ?? nameOf(first.table)) : null;
    if (!alias || list(from).length !== 1)
      return { kind: 'none', reason: 'a multi-table write has no preview' };
    const assigned: string[] = [];
    const columns: unknown[] = [{ expr: { type: 'column_ref', table: alias, column: '*' }, as: null }];
    for (const a of list(s.set)) {
      if (!isObj(a)) continue;
      assigned.push(String(a.column));
      columns.push({ expr: a.value, as: `set:${String(a.column)}` });
    }
    return {
      kind: 'rows',
      verb: s.type === 'update' ? 'UPDATE' : 'DELETE',
      select: print({ type: 'select', columns, from, where: s.where ?? null }),
      assigned,
      volatile,
      filtered: isObj(s.where),
    };
  }
  if ((s.type === 'insert' || s.type === 'replace') && isObj(s.values) && s.values.type === 'select') {
    return {
      kind: 'rows',
      verb: 'INSERT',
      select: print(s.values),
      assigned: [],
      volatile,
      filtered: true,
    };
  }
  if (['create', 'alter', 'drop', 'truncate', 'rename'].includes(String(s.type))) {
    const items = s.type === 'create' ? [] : list(s.type === 'alter' ? s.table : s.name);
    const relations = items
      .filter(isObj)
      .map((t) => ({ schema: nameOf(t.db), name: nameOf(t.table) ?? '' }))
      .filter((r) => r.name);
    return { kind: 'ddl', verb: String(s.type).toUpperCase(), relations };
  }
  return { kind: 'none', reason: 'this statement has no row preview' };
}
