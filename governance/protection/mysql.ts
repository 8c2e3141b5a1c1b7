// The MySQL/MariaDB rewriter, over node-sql-parser's tree: the same scope resolution as the
// Postgres one (scope.ts), the same replacement of every protected column reference, and the
// statement printed back with the parser's own sqlify so the server runs exactly what was checked.
// Tree helpers are in mysql-ast.ts, outright refusals in mysql-refuse.ts.
import {
  columnName,
  isObj,
  leadingKeyword,
  list,
  nameOf,
  type Obj,
  parseExpr,
  parser,
  qualifier,
  tick,
} from './mysql-ast.ts';
import { checkFunction, SELECT_KEYS, SYSTEM_SCHEMAS, stringLiteral } from './mysql-refuse.ts';
import {
  MASK,
  ProtectionParseError,
  ProtectionRefusedError,
  type RuleBook,
  UnknownObjectError,
} from './rules.ts';
import type { DbSchema } from './schema-cache.ts';
import { type BaseEntry, baseEntry, type Entry, type Level, Scope } from './scope.ts';

/** Rewrites one MySQL/MariaDB statement for a policy; returns the SQL to run. */
export function rewriteMysql(
  sql: string,
  schema: DbSchema,
  rules: RuleBook,
  flavor: 'MySQL' | 'MariaDB' = 'MariaDB',
): string {
  const keyword = leadingKeyword(sql);
  if (keyword !== 'SELECT' && keyword !== 'WITH') {
    throw new ProtectionRefusedError(
      `only SELECT statements run under a data-protection policy; ${keyword || 'this statement'} is refused`,
    );
  }
  let ast: unknown;
  try {
    ast = parser.astify(sql, { database: flavor });
  } catch (err) {
    throw new ProtectionParseError(
      `the statement could not be analyzed: ${err instanceof Error ? err.message.slice(0, 200) : 'syntax error'}`,
    );
  }
  const stmts = Array.isArray(ast) ? ast : [ast];
  if (stmts.length !== 1 || !isObj(stmts[0]))
    throw new ProtectionRefusedError('exactly one statement may run under a data-protection policy');
  const stmt = stmts[0];
  if (stmt.type !== 'select')
    throw new ProtectionRefusedError(
      `only SELECT statements run under a data-protection policy; ${String(stmt.type).toUpperCase()} is refused`,
    );
  new MysqlRewriter(schema, rules).select(stmt, new Scope([], true), [], true);
  return parser.sqlify(stmt as never, { database: flavor });
}

type Ctes = ReadonlyArray<Map<string, string[] | null>>;

class MysqlRewriter {
  constructor(
    private readonly schema: DbSchema,
    private readonly rules: RuleBook,
  ) {}

  select(sel: Obj, outer: Scope, ctes: Ctes, top: boolean): string[] | null {
    for (const key of Object.keys(sel)) {
      if (!SELECT_KEYS.has(key)) throw new ProtectionRefusedError(`the ${key} clause is not supported`);
    }
    if (sel.type !== 'select')
      throw new ProtectionRefusedError(`${String(sel.type).toUpperCase()} in this position is refused`);
    if (isObj(sel.into) && sel.into.position) throw new ProtectionRefusedError('SELECT ... INTO is refused');
    if (sel.window) throw new ProtectionRefusedError('named WINDOW clauses are not supported');
    const visible = sel.with ? [...ctes, this.with(list(sel.with), outer, ctes)] : ctes;
    const level: Level = { entries: [], using: new Set() };
    for (const item of list(sel.from)) this.fromItem(item, level, outer, visible);
    const scope = outer.push(level);
    sel.columns = this.targets(list(sel.columns), level, scope, visible, top);
    const outputs = list(sel.columns).map((c) => (isObj(c) ? (nameOf(c.as) ?? columnName(c.expr)) : null));
    sel.where = this.expr(sel.where, scope, visible);
    // GROUP BY and HAVING look in FROM first, ORDER BY in the select list first (MySQL manual,
    // "Problems with Column Aliases"); a bare output name is already a protected value.
    const known = outputs.filter((o): o is string => o !== null);
    if (isObj(sel.groupby))
      sel.groupby.columns = list(sel.groupby.columns).map((g) => this.key(g, scope, visible, known, false));
    sel.having = this.key(sel.having, scope, visible, known, false);
    for (const o of list(sel.orderby)) if (isObj(o)) o.expr = this.key(o.expr, scope, visible, known, true);
    sel.limit = this.expr(sel.limit, scope, visible);
    if (isObj(sel._next)) this.select(sel._next, outer, visible, top);
    return outputs.every((o) => o !== null) ? (outputs as string[]) : null;
  }

  private with(items: unknown[], outer: Scope, ctes: Ctes): Map<string, string[] | null> {
    const mine = new Map<string, string[] | null>();
    const visible = [...ctes, mine];
    for (const item of items) {
      if (!isObj(item)) continue;
      const name = nameOf(item.name) ?? '';
      const aliases = list(item.columns).map((c) => (isObj(c) ? (nameOf(c.column) ?? '') : ''));
      if (item.recursive) mine.set(name, aliases.length ? aliases : null);
      const body = isObj(item.stmt) && isObj(item.stmt.ast) ? item.stmt.ast : null;
      if (!body) throw new ProtectionRefusedError(`the WITH query ${name} is not supported`);
      const out = this.select(body, outer, visible, false);
      mine.set(name, aliases.length ? aliases : out);
    }
    return mine;
  }

  private fromItem(item: unknown, level: Level, outer: Scope, ctes: Ctes): void {
    if (!isObj(item)) throw new ProtectionRefusedError('this FROM item is not supported');
    if (item.type === 'dual') return;
    const alias = nameOf(item.as);
    let entry: Entry;
    if (isObj(item.expr) && isObj(item.expr.ast)) {
      const lateral = outer.push({ entries: [...level.entries], using: new Set(level.using) });
      const out = this.select(item.expr.ast, lateral, ctes, false);
      entry = { kind: 'derived', refName: alias ?? '', columns: out };
    } else if (typeof item.table === 'string' && !item.expr) {
      entry = this.relation(nameOf(item.db), item.table, alias, ctes);
    } else {
      throw new ProtectionRefusedError('this FROM item is not supported');
    }
    level.entries.push(entry);
    const using = list(item.using).map((u) => nameOf(u) ?? '');
    for (const u of using) this.checkUsing(u, level);
    for (const u of using) level.using.add(u);
    if (item.on) item.on = this.expr(item.on, outer.push(level), ctes);
  }

  private relation(db: string | null, name: string, alias: string | null, ctes: Ctes): Entry {
    if (db === null) {
      for (let i = ctes.length - 1; i >= 0; i--) {
        const found = [...ctes[i]!.entries()].find(([k]) => k.toLowerCase() === name.toLowerCase());
        if (found) return { kind: 'derived', refName: alias ?? name, columns: found[1] };
      }
    }
    if (db !== null && SYSTEM_SCHEMAS.has(db.toLowerCase()))
      throw new ProtectionRefusedError(`system schema ${db} is refused`);
    const rel = this.schema.find(db, name);
    if (!rel) throw new UnknownObjectError(`table ${db ? `${db}.` : ''}${name} is not known`);
    return baseEntry(rel, alias, [], db);
  }

  private checkUsing(name: string, level: Level): void {
    for (const e of level.entries) {
      if (e.kind !== 'base') continue;
      const i = e.colNames.findIndex((c) => c.toLowerCase() === name.toLowerCase());
      const col = i >= 0 ? e.rel.columns[i] : undefined;
      if (col && !this.rules.isShown(e.rel.schema, e.rel.name, col.name)) {
        throw new ProtectionRefusedError(
          `JOIN USING (${name}) compares a protected column; join ON it instead`,
        );
      }
    }
  }

  private targets(columns: unknown[], level: Level, scope: Scope, ctes: Ctes, top: boolean): unknown[] {
    const out: unknown[] = [];
    for (const c of columns) {
      if (!isObj(c)) throw new ProtectionRefusedError('this select list is not supported');
      const ref = isObj(c.expr) && c.expr.type === 'column_ref' ? c.expr : null;
      if (ref && nameOf(ref.column) === '*') {
        const table = nameOf(ref.table);
        const entries = table === null ? level.entries : [scope.findEntry(qualifier(ref))];
        if (table === null && level.using.size > 0)
          throw new ProtectionRefusedError('* over a JOIN USING is not supported: list the columns');
        for (const e of entries) {
          if (!e) throw new UnknownObjectError(`the table reference ${table} is not known`);
          out.push(...this.expand(e));
        }
        continue;
      }
      c.expr = this.expr(c.expr, scope, ctes);
      // Keep a replaced column's name; inner levels keep theirs so outer references resolve.
      if (ref && !nameOf(c.as) && (c.expr !== ref || !top)) c.as = nameOf(ref.column);
      out.push(c);
    }
    return out;
  }

  private expand(entry: Entry): unknown[] {
    if (entry.kind === 'derived') {
      if (!entry.refName) throw new ProtectionRefusedError('* over an unaliased subquery is not supported');
      return [{ expr: { type: 'column_ref', table: entry.refName, column: '*' }, as: null }];
    }
    return entry.colNames.map((name, i) => ({
      expr: this.protect(entry, i, { type: 'column_ref', table: entry.refName, column: name }),
      as: name,
    }));
  }

  private key(node: unknown, scope: Scope, ctes: Ctes, outputs: string[], outputFirst: boolean): unknown {
    const ref =
      isObj(node) && node.type === 'column_ref' && nameOf(node.table) === null ? nameOf(node.column) : null;
    if (ref !== null && outputs.some((o) => o.toLowerCase() === ref.toLowerCase())) {
      const local = scope.innermost?.entries.some((e) =>
        (e.kind === 'base' ? e.colNames : (e.columns ?? [])).some(
          (n) => n.toLowerCase() === ref.toLowerCase(),
        ),
      );
      if (outputFirst || !local) return node;
    }
    return this.expr(node, scope, ctes);
  }

  expr(n: unknown, scope: Scope, ctes: Ctes): unknown {
    if (Array.isArray(n)) return n.map((x) => this.expr(x, scope, ctes));
    if (!isObj(n)) return n;
    if (isObj(n.ast)) {
      this.select(n.ast, scope, ctes, false);
      return n;
    }
    switch (n.type) {
      case 'single_quote_string':
      case 'double_quote_string':
      case 'natural_string':
        return stringLiteral(n);
      case 'column_ref':
        return this.columnRef(n, scope);
      case 'function':
        checkFunction(n.name);
        break;
      case 'aggr_func':
        checkFunction({ name: [{ value: String(n.name) }] });
        break;
      case 'select':
        throw new ProtectionRefusedError('a SELECT in this position is not supported');
    }
    for (const k of Object.keys(n))
      if (k !== 'tableList' && k !== 'columnList') n[k] = this.expr(n[k], scope, ctes);
    return n;
  }

  private columnRef(n: Obj, scope: Scope): unknown {
    const column = nameOf(n.column);
    if (column === null) throw new ProtectionRefusedError('this column reference is not supported');
    if (column === '*') throw new ProtectionRefusedError('* in this position is not supported');
    const q = qualifier(n);
    const r = q.length === 0 ? scope.resolveBare(column, false) : scope.resolveQualified(q, column);
    if (r.kind === 'derived') return n;
    return this.protect(r.entry, r.entry.rel.columns.indexOf(r.column), n);
  }

  private protect(entry: BaseEntry, i: number, ref: unknown): unknown {
    const col = entry.rel.columns[i]!;
    const t = this.rules.treatment(entry.rel.schema, entry.rel.name, col.name);
    const c = `${tick(entry.refName)}.${tick(entry.colNames[i]!)}`;
    switch (t.action) {
      case 'show':
        return ref;
      case 'mask':
        return parseExpr(`'${MASK}'`);
      case 'hide':
        return parseExpr('NULL');
      case 'hash':
        return parseExpr(`MD5(CONCAT('${this.rules.salt}:', ${c}))`);
      case 'partial':
        return parseExpr(
          `CASE WHEN CHAR_LENGTH(${c}) > ${t.keepFirst + t.keepLast} THEN CONCAT(LEFT(${c}, ${t.keepFirst}), '${MASK}', RIGHT(${c}, ${t.keepLast})) ELSE '${MASK}' END`,
        );
    }
  }
}
