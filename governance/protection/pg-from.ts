// The FROM and WITH clauses of the Postgres rewriter: each FROM item becomes a scope entry (a base
// relation the policy applies to, or a derived one whose outputs are already safe), CTE names are
// tracked per level, and relations the rewriter cannot see through are refused.

import type { DbSchema } from '../../sql/catalog.ts';
import { as, type Fields, isObj, kindOf, list, names } from '../../sql/pg-tree.ts';
import { POSTGRES_TABLE_FUNCTION_COLUMNS } from './functions.ts';
import { mustSelect } from './pg-refuse.ts';
import { ProtectionRefusedError, type RuleBook, UnknownObjectError } from './rules.ts';
import { baseEntry, type Entry, type Level, type Scope } from './scope.ts';

/** A FROM item, kept as a tree so `*` over USING joins expands in the server's order. */
export type FromTree =
  | { entry: Entry }
  | { left: FromTree; right: FromTree; using: string[]; joinType: string };

/** CTE names visible at a level, innermost map last. */
export type Ctes = ReadonlyArray<Map<string, string[] | null>>;

/** What FROM handling needs from the statement rewriter: the schema, the policy, and recursion. */
export interface Rewrite {
  readonly schema: DbSchema;
  readonly rules: RuleBook;
  select(sel: Fields, outer: Scope, ctes: Ctes, top: boolean): string[] | null;
  expr(n: unknown, scope: Scope, ctes: Ctes): unknown;
}

/** Rewrites each CTE of a WITH clause; returns the output columns of each name it defines. */
export function withClause(rw: Rewrite, w: Fields, outer: Scope, ctes: Ctes): Map<string, string[] | null> {
  const mine = new Map<string, string[] | null>();
  const visible = [...ctes, mine];
  for (const c of list(w.ctes)) {
    const cte = as(c, 'CommonTableExpr')!;
    if (cte.search_clause || cte.cycle_clause)
      throw new ProtectionRefusedError('SEARCH and CYCLE clauses are not supported');
    const query = as(cte.ctequery, 'SelectStmt');
    if (!query) throw new ProtectionRefusedError('a data-modifying WITH query is refused');
    const name = String(cte.ctename);
    const aliases = names(cte.aliascolnames);
    // A recursive CTE refers to itself; its columns are unknown until its body is read.
    if (w.recursive) mine.set(name, aliases.length ? aliases : null);
    const out = rw.select(query, outer, visible, false);
    mine.set(name, out && renamed(out, aliases));
  }
  return mine;
}

/** Adds one FROM item (and, for a join, both sides) to `level`; returns its tree. */
export function fromItem(rw: Rewrite, item: unknown, level: Level, outer: Scope, ctes: Ctes): FromTree {
  const kind = kindOf(item);
  const f = kind ? (item as Record<string, Fields>)[kind]! : {};
  const alias = isObj(f.alias) ? (f.alias as Fields) : null;
  const aliasName = alias ? String(alias.aliasname) : null;
  const colAliases = names(alias?.colnames);
  // LATERAL items (and functions, always lateral) see the items before them. A subquery without
  // LATERAL does not: the server resolves its names in the outer queries, past those items
  // (p_lateral_only), so it is rewritten in the outer scope, where such a name is masked.
  const lateral = () => outer.push({ entries: [...level.entries], using: new Set(level.using) });
  let entry: Entry;
  switch (kind) {
    case 'RangeVar':
      entry = relation(rw.schema, f, aliasName, colAliases, ctes);
      break;
    case 'RangeSubselect': {
      const out = rw.select(mustSelect(f.subquery), f.lateral ? lateral() : outer, ctes, false);
      entry = { kind: 'derived', refName: aliasName ?? '', columns: out && renamed(out, colAliases) };
      break;
    }
    case 'RangeFunction':
      entry = tableFunction(rw, f, aliasName, colAliases, lateral(), ctes);
      break;
    case 'JoinExpr': {
      if (f.isNatural) throw new ProtectionRefusedError('NATURAL JOIN is refused: name the join columns');
      if (alias || f.join_using_alias)
        throw new ProtectionRefusedError('an alias on a JOIN is not supported');
      const first = level.entries.length;
      const left = fromItem(rw, f.larg, level, outer, ctes);
      const right = fromItem(rw, f.rarg, level, outer, ctes);
      const using = names(f.usingClause);
      // The condition sees the join's two sides and the outer queries, not the FROM items
      // before the join (transformJoinOnClause): it is resolved in exactly that scope.
      const sides: Level = {
        entries: level.entries.slice(first),
        using: new Set([...usingOf(left), ...usingOf(right)]),
      };
      for (const u of using) checkUsing(rw.rules, u, sides);
      for (const u of using) level.using.add(u);
      for (const u of using) sides.using.add(u);
      f.quals = rw.expr(f.quals, outer.push(sides), ctes);
      return { left, right, using, joinType: String(f.jointype) };
    }
    default:
      throw new ProtectionRefusedError(`the FROM item ${kind ?? 'unknown'} is not supported`);
  }
  level.entries.push(entry);
  return { entry };
}

function relation(
  schemaInfo: DbSchema,
  f: Fields,
  alias: string | null,
  colAliases: string[],
  ctes: Ctes,
): Entry {
  const schema = typeof f.schemaname === 'string' ? f.schemaname : null;
  const name = String(f.relname);
  if (f.catalogname)
    throw new ProtectionRefusedError(
      `the reference ${String(f.catalogname)}.${schema}.${name} is not supported`,
    );
  if (schema === null) {
    for (let i = ctes.length - 1; i >= 0; i--) {
      const cols = ctes[i]!.get(name);
      if (cols !== undefined)
        return { kind: 'derived', refName: alias ?? name, columns: cols && renamed(cols, colAliases) };
    }
  }
  // pg_catalog is searched before the search_path, so any pg_* name may be a catalog.
  if (
    schema === 'pg_catalog' ||
    schema === 'information_schema' ||
    (schema === null && name.startsWith('pg_'))
  ) {
    throw new ProtectionRefusedError(`system catalog ${schema ? `${schema}.` : ''}${name} is refused`);
  }
  const rel = schemaInfo.find(schema, name);
  if (!rel) throw new UnknownObjectError(`relation "${schema ? `${schema}.` : ''}${name}" does not exist`);
  return baseEntry(rel, alias, colAliases, schema);
}

function tableFunction(
  rw: Rewrite,
  f: Fields,
  alias: string | null,
  colAliases: string[],
  scope: Scope,
  ctes: Ctes,
): Entry {
  if (f.is_rowsfrom) throw new ProtectionRefusedError('ROWS FROM is not supported');
  const items = list(as(list(f.functions)[0], 'List')?.items);
  const call = as(items[0], 'FuncCall');
  if (!call || list(f.functions).length !== 1)
    throw new ProtectionRefusedError('this function in FROM is not supported');
  rw.expr(items[0], scope, ctes);
  const fname = names(call.funcname).at(-1)!;
  const defs = list(items[1] ?? f.coldeflist).map((d) => String(as(d, 'ColumnDef')?.colname));
  const known = POSTGRES_TABLE_FUNCTION_COLUMNS.get(fname);
  let columns: string[] | null = defs.length
    ? defs
    : known === undefined
      ? null
      : (known ?? [alias ?? fname]);
  if (columns && f.ordinality) columns = [...columns, 'ordinality'];
  if (colAliases.length) columns = columns ? renamed(columns, colAliases) : null;
  return { kind: 'derived', refName: alias ?? fname, columns };
}

/** A USING column is compared across both sides: it must be shown on every base side. */
function checkUsing(rules: RuleBook, name: string, level: Level): void {
  for (const e of level.entries) {
    if (e.kind !== 'base') continue;
    const i = e.colNames.indexOf(name);
    const col = i >= 0 ? e.rel.columns[i] : undefined;
    if (col && !rules.isShown(e.rel.schema, e.rel.name, col.name)) {
      throw new ProtectionRefusedError(
        `JOIN USING (${name}) compares a protected column; join ON it instead`,
      );
    }
  }
}

/** The USING columns merged inside one FROM tree. */
function usingOf(tree: FromTree): string[] {
  return 'entry' in tree ? [] : [...usingOf(tree.left), ...usingOf(tree.right), ...tree.using];
}

function renamed(columns: string[], aliases: string[]): string[] {
  return columns.map((c, i) => aliases[i] ?? c);
}
