// The Postgres rewriter: parses with the server's own parser (libpg-query), resolves every
// column reference against the statement's scopes and the schema, replaces each reference to
// a protected column by its masked expression wherever it appears (select list, WHERE, JOIN,
// GROUP BY, ORDER BY, HAVING, function arguments, subqueries), expands `*`, and refuses every
// construct it cannot prove safe. The tree is printed back with pgsql-deparser.
import { deparseSync } from 'pgsql-deparser';
import { POSTGRES_FUNCTIONS, POSTGRES_OPERATORS, POSTGRES_TABLE_FUNCTION_COLUMNS } from './functions.ts';
import {
  as,
  type Fields,
  figureName,
  ident,
  isObj,
  kindOf,
  list,
  literal,
  loadParser,
  names,
  parseExpr,
  parsePg,
  sval,
} from './pg-ast.ts';
import { MASK, ProtectionRefusedError, type RuleBook, UnknownObjectError } from './rules.ts';
import type { DbSchema } from './schema-cache.ts';
import { type BaseEntry, baseEntry, type Entry, type Level, Scope } from './scope.ts';

/** Statement kinds that are never run under a policy, with the name the refusal uses. */
const STATEMENT_NAMES: Record<string, string> = {
  CopyStmt: 'COPY',
  DoStmt: 'DO',
  PrepareStmt: 'PREPARE',
  ExecuteStmt: 'EXECUTE',
  DeclareCursorStmt: 'DECLARE CURSOR',
  FetchStmt: 'FETCH',
  ClosePortalStmt: 'CLOSE',
  CallStmt: 'CALL',
  ExplainStmt: 'EXPLAIN',
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  VariableSetStmt: 'SET',
  VariableShowStmt: 'SHOW',
  CreateTableAsStmt: 'CREATE TABLE AS',
  ViewStmt: 'CREATE VIEW',
  CreateFunctionStmt: 'CREATE FUNCTION',
  TransactionStmt: 'a transaction statement',
};

/** Keys of a SelectStmt the rewriter understands; any other clause is refused. */
const SELECT_KEYS = new Set([
  'targetList',
  'fromClause',
  'whereClause',
  'groupClause',
  'groupDistinct',
  'havingClause',
  'windowClause',
  'valuesLists',
  'sortClause',
  'limitOffset',
  'limitCount',
  'limitOption',
  'lockingClause',
  'withClause',
  'op',
  'all',
  'larg',
  'rarg',
  'distinctClause',
]);

/** A FROM item, kept as a tree so `*` over USING joins expands in the server's order. */
type FromTree = { entry: Entry } | { left: FromTree; right: FromTree; using: string[]; joinType: string };

/** CTE names visible at a level, innermost map last. */
type Ctes = ReadonlyArray<Map<string, string[] | null>>;

/** Rewrites one statement for a policy; returns the SQL to run. */
export async function rewritePostgres(sql: string, schema: DbSchema, rules: RuleBook): Promise<string> {
  await loadParser();
  const tree = parsePg(sql);
  const { stmts } = tree;
  if (stmts.length !== 1)
    throw new ProtectionRefusedError('exactly one statement may run under a data-protection policy');
  const stmt = stmts[0]!.stmt;
  const select = as(stmt, 'SelectStmt');
  if (!select) {
    const kind = kindOf(stmt) ?? 'unknown';
    const name = STATEMENT_NAMES[kind] ?? kind.replace(/Stmt$/, '');
    throw new ProtectionRefusedError(
      `only SELECT statements run under a data-protection policy; ${name} is refused`,
    );
  }
  new PgRewriter(schema, rules).select(select, new Scope([], false), [], true);
  return deparseSync(tree as never) as string;
}

class PgRewriter {
  constructor(
    private readonly schema: DbSchema,
    private readonly rules: RuleBook,
  ) {}

  /** Rewrites a SelectStmt in place; returns its output column names. */
  select(sel: Fields, outer: Scope, ctes: Ctes, top: boolean): string[] {
    for (const key of Object.keys(sel)) {
      if (key === 'intoClause')
        throw new ProtectionRefusedError('SELECT INTO is refused (it writes a table)');
      if (!SELECT_KEYS.has(key)) throw new ProtectionRefusedError(`the ${key} clause is not supported`);
    }
    const visible = sel.withClause ? [...ctes, this.withClause(sel.withClause as Fields, outer, ctes)] : ctes;
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
      return list(first?.items).map((_, i) => `column${i + 1}`);
    }
    const level: Level = { entries: [], using: new Set() };
    const trees = list(sel.fromClause).map((item) => this.fromItem(item, level, outer, visible));
    const scope = outer.push(level);
    sel.targetList = this.targets(list(sel.targetList), trees, scope, visible, top);
    const outputs = list(sel.targetList).map((t) => {
      const rt = as(t, 'ResTarget')!;
      return typeof rt.name === 'string' ? rt.name : figureName(rt.val);
    });
    for (const k of ['whereClause', 'havingClause', 'windowClause', 'limitCount', 'limitOffset']) {
      this.rewriteKey(sel, k, scope, visible);
    }
    // GROUP BY prefers input columns, ORDER BY and DISTINCT ON output names (SQL92 rules of
    // findTargetlistEntrySQL92); a bare output name is already a protected value.
    if (sel.groupClause)
      sel.groupClause = list(sel.groupClause).map((g) => this.sortKey(g, scope, visible, outputs, false));
    if (sel.distinctClause) {
      sel.distinctClause = list(sel.distinctClause).map((d) =>
        kindOf(d) ? this.sortKey(d, scope, visible, outputs, true) : d,
      );
    }
    for (const s of list(sel.sortClause)) {
      const sortBy = as(s, 'SortBy');
      if (sortBy) sortBy.node = this.sortKey(sortBy.node, scope, visible, outputs, true);
    }
    return outputs;
  }

  private rewriteKey(sel: Fields, key: string, scope: Scope, ctes: Ctes): void {
    if (sel[key] !== undefined) sel[key] = this.expr(sel[key], scope, ctes);
  }

  private withClause(w: Fields, outer: Scope, ctes: Ctes): Map<string, string[] | null> {
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
      const out = this.select(query, outer, visible, false);
      mine.set(name, renamed(out, aliases));
    }
    return mine;
  }

  private fromItem(item: unknown, level: Level, outer: Scope, ctes: Ctes): FromTree {
    const kind = kindOf(item);
    const f = kind ? (item as Record<string, Fields>)[kind]! : {};
    const alias = isObj(f.alias) ? (f.alias as Fields) : null;
    const aliasName = alias ? String(alias.aliasname) : null;
    const colAliases = names(alias?.colnames);
    // LATERAL items see the items before them; non-lateral ones cannot, and the server says so.
    const lateral = () => outer.push({ entries: [...level.entries], using: new Set(level.using) });
    let entry: Entry;
    switch (kind) {
      case 'RangeVar':
        entry = this.relation(f, aliasName, colAliases, ctes);
        break;
      case 'RangeSubselect': {
        const out = this.select(mustSelect(f.subquery), lateral(), ctes, false);
        entry = { kind: 'derived', refName: aliasName ?? '', columns: renamed(out, colAliases) };
        break;
      }
      case 'RangeFunction':
        entry = this.tableFunction(f, aliasName, colAliases, lateral(), ctes);
        break;
      case 'JoinExpr': {
        if (f.isNatural) throw new ProtectionRefusedError('NATURAL JOIN is refused: name the join columns');
        if (alias || f.join_using_alias)
          throw new ProtectionRefusedError('an alias on a JOIN is not supported');
        const left = this.fromItem(f.larg, level, outer, ctes);
        const right = this.fromItem(f.rarg, level, outer, ctes);
        const using = names(f.usingClause);
        for (const u of using) this.checkUsing(u, level);
        for (const u of using) level.using.add(u);
        f.quals = this.expr(f.quals, outer.push(level), ctes);
        return { left, right, using, joinType: String(f.jointype) };
      }
      default:
        throw new ProtectionRefusedError(`the FROM item ${kind ?? 'unknown'} is not supported`);
    }
    level.entries.push(entry);
    return { entry };
  }

  private relation(f: Fields, alias: string | null, colAliases: string[], ctes: Ctes): Entry {
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
    const rel = this.schema.find(schema, name);
    if (!rel) throw new UnknownObjectError(`relation ${schema ? `${schema}.` : ''}${name} is not known`);
    return baseEntry(rel, alias, colAliases, schema);
  }

  private tableFunction(
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
    this.expr(items[0], scope, ctes);
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
  private checkUsing(name: string, level: Level): void {
    for (const e of level.entries) {
      if (e.kind !== 'base') continue;
      const i = e.colNames.indexOf(name);
      const col = i >= 0 ? e.rel.columns[i] : undefined;
      if (col && !this.rules.isShown(e.rel.schema, e.rel.name, col.name)) {
        throw new ProtectionRefusedError(
          `JOIN USING (${name}) compares a protected column; join ON it instead`,
        );
      }
    }
  }

  /** The select list, with `*` and `t.*` expanded so each protected column is masked. */
  private targets(targets: unknown[], trees: FromTree[], scope: Scope, ctes: Ctes, top: boolean): unknown[] {
    const out: unknown[] = [];
    for (const t of targets) {
      const rt = as(t, 'ResTarget')!;
      const ref = as(rt.val, 'ColumnRef');
      const fields = list(ref?.fields);
      if (ref && kindOf(fields.at(-1)) === 'A_Star') {
        const qualifier = names(fields.slice(0, -1));
        if (qualifier.length === 0) out.push(...trees.flatMap((tree) => this.expandTree(tree)));
        else {
          const entry = scope.findEntry(qualifier);
          if (!entry) throw new UnknownObjectError(`the table reference ${qualifier.join('.')} is not known`);
          out.push(...this.expandEntry(entry));
        }
        continue;
      }
      const wasColumn = ref !== null;
      rt.val = this.expr(rt.val, scope, ctes);
      // Keep the name a replaced column had; inner levels are named explicitly so that the
      // names the rewriter resolves outer references against are the server's.
      if (typeof rt.name !== 'string' && (!top || (wasColumn && kindOf(rt.val) !== 'ColumnRef'))) {
        rt.name = wasColumn ? (sval(fields.at(-1)) ?? figureName(rt.val)) : figureName(rt.val);
      }
      out.push(t);
    }
    return out;
  }

  private expandTree(tree: FromTree): unknown[] {
    if ('entry' in tree) return this.expandEntry(tree.entry);
    if (tree.using.length === 0) return [...this.expandTree(tree.left), ...this.expandTree(tree.right)];
    // USING columns come first, once, then each side's other columns.
    const sides = [tree.left, tree.right].map((side) => {
      if (!('entry' in side) || side.entry.kind !== 'base') {
        throw new ProtectionRefusedError(
          '* over a JOIN USING of a subquery or of another join is not supported: list the columns',
        );
      }
      return side.entry;
    });
    const rest = sides.flatMap((e) => this.expandEntry(e, new Set(tree.using)));
    // The merged column, qualified so a later join cannot make it ambiguous: the left side's
    // value for inner and left joins, the right side's for right joins, either for full ones.
    const merged = (u: string): unknown => {
      const [l, r] = sides.map((e) => columnRef(e.refName, u));
      if (tree.joinType === 'JOIN_FULL') return { CoalesceExpr: { args: [l, r] } };
      return tree.joinType === 'JOIN_RIGHT' ? r : l;
    };
    return [...tree.using.map((u) => target(u, merged(u))), ...rest];
  }

  private expandEntry(entry: Entry, skip = new Set<string>()): unknown[] {
    if (entry.kind === 'derived') {
      // A subquery's outputs are already safe; its own `alias.*` keeps the server's expansion.
      if (!entry.refName) throw new ProtectionRefusedError('* over an unaliased subquery is not supported');
      return [target(null, { ColumnRef: { fields: [{ String: { sval: entry.refName } }, { A_Star: {} }] } })];
    }
    return entry.colNames.flatMap((name, i) =>
      skip.has(name) ? [] : [target(name, this.protect(entry, i, columnRef(entry.refName, name)))],
    );
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
        checkFunction(names(f.funcname));
        break;
      case 'A_Expr':
        if (['AEXPR_OP', 'AEXPR_OP_ANY', 'AEXPR_OP_ALL'].includes(String(f.kind)))
          checkOperator(names(f.name));
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
        throw new UnknownObjectError(`the table reference ${qualifier.join('.')} is not known`);
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
    return this.protect(r.entry, i, n);
  }

  /** The expression that replaces column `i` of a base entry (the reference itself when shown). */
  private protect(entry: BaseEntry, i: number, ref: unknown): unknown {
    const col = entry.rel.columns[i]!;
    const t = this.rules.treatment(entry.rel.schema, entry.rel.name, col.name);
    const text = `(${ident(entry.refName)}.${ident(entry.colNames[i]!)})::text`;
    switch (t.action) {
      case 'show':
        return ref;
      case 'mask':
        return parseExpr(`${literal(MASK)}::text`);
      case 'hide':
        return hiddenNull(col.type);
      case 'hash':
        return parseExpr(`md5(${literal(`${this.rules.salt}:`)} || ${text})`);
      case 'partial':
        return parseExpr(
          `CASE WHEN length(${text}) > ${t.keepFirst + t.keepLast} THEN left(${text}, ${t.keepFirst}) || ${literal(MASK)} || right(${text}, ${t.keepLast}) ELSE ${literal(MASK)} END`,
        );
    }
  }
}

/** A hidden column reads as NULL of its own type, so expressions over it still type-check. */
function hiddenNull(type: string): unknown {
  try {
    return parseExpr(`NULL::${type}`);
  } catch {
    return parseExpr('NULL::text');
  }
}

/** A SELECT, wrapped (`{ SelectStmt }`) or bare (set-operation arms); anything else is refused. */
function mustSelect(v: unknown): Fields {
  const sel = as(v, 'SelectStmt') ?? (isObj(v) && kindOf(v) === null && 'op' in v ? v : null);
  if (!sel)
    throw new ProtectionRefusedError(`${kindOf(v) ?? 'this statement'} in this position is not supported`);
  return sel;
}

function checkFunction(fname: string[]): void {
  const name = fname.at(-1)?.toLowerCase() ?? '';
  const schemaOk = fname.length === 1 || (fname.length === 2 && fname[0] === 'pg_catalog');
  if (!schemaOk || !POSTGRES_FUNCTIONS.has(name)) {
    throw new ProtectionRefusedError(
      `function ${fname.join('.')} is not on the list of functions allowed under a policy`,
    );
  }
}

function checkOperator(op: string[]): void {
  const symbol = op.at(-1) ?? '';
  const schemaOk = op.length === 1 || (op.length === 2 && op[0] === 'pg_catalog');
  if (!schemaOk || !POSTGRES_OPERATORS.has(symbol)) {
    throw new ProtectionRefusedError(`operator ${op.join('.')} is not allowed under a policy`);
  }
}

function columnRef(qualifier: string, name: string): unknown {
  return { ColumnRef: { fields: [{ String: { sval: qualifier } }, { String: { sval: name } }] } };
}

function target(name: string | null, val: unknown): unknown {
  return { ResTarget: name === null ? { val } : { name, val } };
}

function renamed(columns: string[], aliases: string[]): string[] {
  return columns.map((c, i) => aliases[i] ?? c);
}
