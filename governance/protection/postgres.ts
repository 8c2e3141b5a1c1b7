// The Postgres rewriter: parses with the server's own parser (libpg-query), resolves every
// column reference against the statement's scopes and the schema, replaces each reference to
// a protected column by its masked expression wherever it appears (select list, WHERE, JOIN,
// GROUP BY, ORDER BY, HAVING, function arguments, subqueries), expands `*`, and refuses every
// construct it cannot prove safe. The tree is printed back with pgsql-deparser. FROM and WITH
// handling is in pg-from.ts, masking and `*` expansion in pg-mask.ts, outright refusals in
// pg-refuse.ts.
import type { DbSchema } from '../../sql/catalog.ts';
import { deparsePostgres, loadPostgresParser } from '../../sql/parse.ts';
import { as, type Fields, figureName, isObj, kindOf, list, names, sval } from '../../sql/pg-tree.ts';
import { type Ctes, type FromTree, fromItem, type Rewrite, withClause } from './pg-from.ts';
import { entryNames, expandEntry, expandTree, protect, treeNames } from './pg-mask.ts';
import { parsePg } from './pg-parse.ts';
import { checkFunction, checkOperator, mustSelect, SELECT_KEYS } from './pg-refuse.ts';
import { checkPostgresWrite } from './pg-write.ts';
import { ProtectionRefusedError, type RuleBook, UnknownObjectError } from './rules.ts';
import { type Level, Scope } from './scope.ts';

/** Rewrites one statement for a policy; returns the SQL to run. */
export async function rewritePostgres(sql: string, schema: DbSchema, rules: RuleBook): Promise<string> {
  await loadPostgresParser();
  const tree = parsePg(sql);
  const { stmts } = tree;
  if (stmts.length !== 1)
    throw new ProtectionRefusedError('exactly one statement may run under a data-protection policy');
  const stmt = stmts[0]!.stmt;
  const select = as(stmt, 'SelectStmt');
  if (select?.intoClause || !select) {
    // Writes are checked, not rewritten: nothing protected may be read (pg-write.ts).
    checkPostgresWrite(stmt, rules, (reads) => new PgRewriter(schema, reads));
  } else new PgRewriter(schema, rules).select(select, new Scope([], false), [], true);
  const printed = deparsePostgres(tree);
  // The printer writes a few names bare (CTE and window names), where a crafted name could
  // turn into SQL of its own: the server must read exactly the tree that was checked.
  let back: unknown;
  try {
    back = parsePg(printed);
  } catch {
    back = null;
  }
  if (canonical(back) !== canonical(tree)) {
    throw new ProtectionRefusedError(
      'the statement could not be printed back unchanged (a name with quotes, commas or comment marks?); use plain names',
    );
  }
  return printed;
}

const OPERATOR_KINDS = new Set([
  'AEXPR_OP',
  'AEXPR_OP_ANY',
  'AEXPR_OP_ALL',
  'AEXPR_LIKE',
  'AEXPR_ILIKE',
  'AEXPR_SIMILAR',
  'AEXPR_DISTINCT',
  'AEXPR_NOT_DISTINCT',
  'AEXPR_NULLIF',
  'AEXPR_IN',
]);

const POSITIONS = new Set([
  'location',
  'stmt_location',
  'stmt_len',
  'list_start',
  'list_end',
  'name_location',
  'rexpr_list_start',
  'rexpr_list_end',
]);

/** A tree without source positions, keys sorted, as text, for comparing two parses. */
function canonical(tree: unknown): string {
  return JSON.stringify(tree, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort())
      if (!POSITIONS.has(k)) sorted[k] = (value as Record<string, unknown>)[k];
    return sorted;
  });
}

export class PgRewriter implements Rewrite {
  constructor(
    readonly schema: DbSchema,
    readonly rules: RuleBook,
  ) {}

  /**
   * Rewrites a SelectStmt in place; returns its output column names, or null when they are not
   * all known (a subquery's or table function's `alias.*`, a composite's `(x).*`). A name this
   * returns must be one the server gives: a derived entry that claims a column it does not have
   * would leave a reference to it unmasked, and the server would resolve that reference to a
   * table column of an outer level.
   */
  select(sel: Fields, outer: Scope, ctes: Ctes, top: boolean): string[] | null {
    for (const key of Object.keys(sel)) {
      if (key === 'intoClause')
        throw new ProtectionRefusedError('SELECT INTO is refused (it writes a table)');
      if (!SELECT_KEYS.has(key)) throw new ProtectionRefusedError(`the ${key} clause is not supported`);
    }
    const visible = sel.withClause
      ? [...ctes, withClause(this, sel.withClause as Fields, outer, ctes)]
      : ctes;
    if (sel.op && sel.op !== 'SETOP_NONE') {
      const out = this.select(mustSelect(sel.larg), outer, visible, top);
      this.select(mustSelect(sel.rarg), outer, visible, top);
      // ORDER BY / LIMIT of a set operation see only its output columns.
      const scope = outer.push({
        entries: [{ kind: 'derived', refName: '', columns: null }],
        using: new Set(),
      });
      for (const k of ['sortClause', 'limitCount', 'limitOffset']) this.rewriteKey(sel, k, scope, visible);
      return out;
    }
    if (sel.valuesLists) {
      const scope = outer.push({ entries: [], using: new Set() });
      this.rewriteKey(sel, 'valuesLists', scope, visible);
      const first = as(list(sel.valuesLists)[0], 'List');
      const outputs = list(first?.items).map((_, i) => `column${i + 1}`);
      // VALUES takes ORDER BY, LIMIT and OFFSET too (transformValuesClause): they see its
      // columns, and a sub-select there reads tables like any other.
      const own = outer.push({
        entries: [{ kind: 'derived', refName: '', columns: outputs }],
        using: new Set(),
      });
      for (const k of ['sortClause', 'limitCount', 'limitOffset']) this.rewriteKey(sel, k, own, visible);
      return outputs;
    }
    const level: Level = { entries: [], using: new Set() };
    const trees = list(sel.fromClause).map((item) => fromItem(this, item, level, outer, visible));
    const scope = outer.push(level);
    const { targets, names: known } = this.targets(list(sel.targetList), trees, scope, visible, top);
    sel.targetList = targets;
    const outputs = known.every((n) => n !== null) ? (known as string[]) : null;
    for (const k of ['whereClause', 'havingClause', 'windowClause', 'limitCount', 'limitOffset']) {
      this.rewriteKey(sel, k, scope, visible);
    }
    // GROUP BY prefers input columns, ORDER BY and DISTINCT ON output names (SQL92 rules of
    // findTargetlistEntrySQL92); a bare output name is already a protected value. A name no
    // known output has is rewritten as an input, so a key is masked or is an output, never raw.
    const named = known.filter((n): n is string => n !== null);
    if (sel.groupClause)
      sel.groupClause = list(sel.groupClause).map((g) => this.sortKey(g, scope, visible, named, false));
    if (sel.distinctClause) {
      sel.distinctClause = list(sel.distinctClause).map((d) =>
        kindOf(d) ? this.sortKey(d, scope, visible, named, true) : d,
      );
    }
    for (const s of list(sel.sortClause)) {
      const sortBy = as(s, 'SortBy');
      if (!sortBy) continue;
      // ORDER BY … USING op sorts by calling the operator.
      if (sortBy.useOp !== undefined) checkOperator(names(sortBy.useOp), this.schema);
      sortBy.node = this.sortKey(sortBy.node, scope, visible, named, true);
    }
    return outputs;
  }

  private rewriteKey(sel: Fields, key: string, scope: Scope, ctes: Ctes): void {
    if (sel[key] !== undefined) sel[key] = this.expr(sel[key], scope, ctes);
  }

  /**
   * The select list, with `*` and `t.*` expanded so each protected column is masked, and the
   * names of its outputs in order (a null stands for outputs whose names are not known).
   */
  private targets(
    targets: unknown[],
    trees: FromTree[],
    scope: Scope,
    ctes: Ctes,
    top: boolean,
  ): { targets: unknown[]; names: Array<string | null> } {
    const out: unknown[] = [];
    const outputs: Array<string | null> = [];
    const named = (more: string[] | null) => outputs.push(...(more ?? [null]));
    for (const t of targets) {
      const rt = as(t, 'ResTarget')!;
      const ref = as(rt.val, 'ColumnRef');
      const fields = list(ref?.fields);
      if (ref && kindOf(fields.at(-1)) === 'A_Star') {
        const qualifier = names(fields.slice(0, -1));
        if (qualifier.length === 0) {
          for (const tree of trees) {
            out.push(...expandTree(this.rules, tree));
            named(treeNames(tree));
          }
        } else {
          const entry = scope.findEntry(qualifier);
          if (!entry)
            throw new UnknownObjectError(`missing FROM-clause entry for table "${qualifier.at(-1)}"`);
          out.push(...expandEntry(this.rules, entry));
          named(entryNames(entry));
        }
        continue;
      }
      // The name the server would give the target as written, before anything is replaced
      // in it: the result keeps it, so neither the mask nor the salt shows in a column name.
      // `(x).*` stands for the fields of a composite value, named by its type: no name of its own.
      const star = kindOf(list(as(rt.val, 'A_Indirection')?.indirection).at(-1)) === 'A_Star';
      const before = typeof rt.name === 'string' || star ? null : JSON.stringify(rt.val);
      const name = before === null ? null : figureName(rt.val);
      rt.val = this.expr(rt.val, scope, ctes);
      // Inner levels are named explicitly too, so that the names the rewriter resolves outer
      // references against are the server's.
      if (name !== null && (!top || JSON.stringify(rt.val) !== before)) {
        // A scalar subquery is named after its own first output, which rewriting named.
        rt.name = as(rt.val, 'SubLink')?.subLinkType === 'EXPR_SUBLINK' ? figureName(rt.val) : name;
      }
      out.push(t);
      named(star ? null : [typeof rt.name === 'string' ? rt.name : figureName(rt.val)]);
    }
    return { targets: out, names: outputs };
  }

  /** ORDER BY / GROUP BY / DISTINCT ON key: an ordinal or bare output name refers to an output column. */
  private sortKey(node: unknown, scope: Scope, ctes: Ctes, outputs: string[], outputFirst: boolean): unknown {
    if (as(node, 'A_Const')) return node;
    const fields = list(as(node, 'ColumnRef')?.fields);
    const name = fields.length === 1 ? sval(fields[0]) : null;
    if (name !== null && outputs.includes(name)) {
      if (outputFirst) return node;
      const local = scope.innermost?.entries.some((e) =>
        (e.kind === 'base' ? e.colNames : (e.columns ?? [])).includes(name),
      );
      if (!local) return node;
    }
    return this.expr(node, scope, ctes);
  }

  /** Rewrites an expression tree; returns the (possibly replaced) node. */
  expr(n: unknown, scope: Scope, ctes: Ctes): unknown {
    if (Array.isArray(n)) return n.map((x) => this.expr(x, scope, ctes));
    if (!isObj(n)) return n;
    const kind = kindOf(n);
    if (!kind) {
      for (const k of Object.keys(n)) n[k] = this.expr(n[k], scope, ctes);
      return n;
    }
    const f = n[kind] as Fields;
    switch (kind) {
      case 'ColumnRef':
        return this.columnRef(n, f, scope);
      case 'SubLink': {
        this.select(mustSelect(f.subselect), scope, ctes, false);
        f.testexpr = this.expr(f.testexpr, scope, ctes);
        return n;
      }
      case 'FuncCall':
        checkFunction(names(f.funcname), this.schema);
        break;
      case 'A_Expr':
        // LIKE, SIMILAR TO, IN, IS DISTINCT FROM and NULLIF call an operator too.
        if (OPERATOR_KINDS.has(String(f.kind))) checkOperator(names(f.name), this.schema);
        break;
      case 'SelectStmt':
      case 'RangeVar':
        throw new ProtectionRefusedError(`${kind} in this position is not supported`);
    }
    for (const k of Object.keys(f)) f[k] = this.expr(f[k], scope, ctes);
    return n;
  }

  private columnRef(n: unknown, f: Fields, scope: Scope): unknown {
    const fields = list(f.fields);
    if (kindOf(fields.at(-1)) === 'A_Star') {
      const qualifier = names(fields.slice(0, -1));
      const entry = qualifier.length ? scope.findEntry(qualifier) : null;
      const anyBase = scope.innermost?.entries.some((e) => e.kind === 'base');
      if (entry?.kind === 'base' || (!qualifier.length && anyBase)) {
        throw new ProtectionRefusedError(
          `the whole-row reference ${qualifier.join('.') || '*'} would expose protected columns`,
        );
      }
      if (!entry && qualifier.length)
        throw new UnknownObjectError(`missing FROM-clause entry for table "${qualifier.at(-1)}"`);
      return n;
    }
    const parts = names(fields);
    if (parts.some((p) => p === ''))
      throw new ProtectionRefusedError('this column reference is not supported');
    const r =
      parts.length === 1
        ? scope.resolveBare(parts[0]!, true)
        : scope.resolveQualified(parts.slice(0, -1), parts.at(-1)!);
    if (r.kind === 'derived') return n;
    const i = r.entry.rel.columns.indexOf(r.column);
    return protect(this.rules, r.entry, i, n);
  }
}
