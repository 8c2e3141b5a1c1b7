// The MySQL/MariaDB rewriter, over node-sql-parser's tree: the same scope resolution as the
// Postgres one (scope.ts), the same replacement of every protected column reference, and the
// statement printed back with the parser's own sqlify so the server runs exactly what was checked.
// Tree helpers are in sql/mysql-tree.ts, outright refusals in mysql-refuse.ts.

import type { DbSchema } from '../../sql/catalog.ts';
import { standInJsonTables } from '../../sql/mysql-json-table.ts';
import { isObj, leadingKeyword, list, nameOf, type Obj, qualifier } from '../../sql/mysql-tree.ts';
import { sqlParser } from '../../sql/parse.ts';
import { checkUsing, escapeName, LITERALS, protectMysql } from './mysql-mask.ts';
import { itemTexts, parseMysql, restoreMarks } from './mysql-parse.ts';
import {
  checkFunction,
  checkIdentifiers,
  SELECT_KEYS,
  SYSTEM_SCHEMAS,
  stringLiteral,
} from './mysql-refuse.ts';
import { itemName, normalize } from './mysql-text.ts';
import { checkMysqlWrite } from './mysql-write.ts';
import {
  ProtectionParseError,
  ProtectionRefusedError,
  type RuleBook,
  UnknownColumnError,
  UnknownObjectError,
} from './rules.ts';
import { baseEntry, type Entry, type Level, Scope } from './scope.ts';

/** Rewrites one MySQL/MariaDB statement for a policy; returns the SQL to run. */
export function rewriteMysql(
  sql: string,
  schema: DbSchema,
  rules: RuleBook,
  flavor: 'MySQL' | 'MariaDB' = 'MariaDB',
): string {
  const keyword = leadingKeyword(sql);
  if (!READ_OR_WRITE.has(keyword)) {
    throw new ProtectionRefusedError(
      `${keyword || 'this statement'} is refused under a data-protection policy; SELECT, INSERT, REPLACE, UPDATE, DELETE and table DDL run when they read no protected column`,
    );
  }
  const twin = standInJsonTables(sql);
  const normal = normalize(twin.sql);
  const { ast, grammar } = parseMysql(normal.sql, flavor);
  const stmts = Array.isArray(ast) ? ast : [ast];
  if (stmts.length !== 1 || !isObj(stmts[0]))
    throw new ProtectionRefusedError('exactly one statement may run under a data-protection policy');
  const stmt = stmts[0];
  checkIdentifiers(stmt);
  restoreMarks(stmt, normal);
  const texts = itemTexts(stmt, twin.sql);
  let rewriter = new MysqlRewriter(schema, rules, texts, grammar);
  try {
    // Writes are checked, not rewritten: nothing protected may be read (mysql-write.ts).
    if (stmt.type !== 'select')
      checkMysqlWrite(stmt, rules, (reads) => {
        rewriter = new MysqlRewriter(schema, reads, texts, grammar);
        return rewriter;
      });
    else rewriter.select(stmt, new Scope([], true), [], true);
  } catch (err) {
    // The server names the clause an unknown column is in.
    if (err instanceof UnknownColumnError) throw new UnknownColumnError(err.parts, true, rewriter.clause);
    throw err;
  }
  const printed = twin.restore(sqlParser().sqlify(stmt as never, { database: grammar }));
  if (printed === null)
    throw new ProtectionParseError('this JSON_TABLE could not be analyzed; ask an admin to run it');
  return printed;
}

/** First keywords of statements the analysis reads (mysql-write.ts for the writes). */
const READ_OR_WRITE = new Set([
  'SELECT',
  'WITH',
  'INSERT',
  'REPLACE',
  'UPDATE',
  'DELETE',
  'CREATE',
  'ALTER',
  'DROP',
  'TRUNCATE',
  'RENAME',
]);

export type Ctes = ReadonlyArray<Map<string, string[] | null>>;

export class MysqlRewriter {
  /** The clause being rewritten, as the server names it in an unknown-column error. */
  clause = 'field list';

  constructor(
    readonly schema: DbSchema,
    private readonly rules: RuleBook,
    private readonly texts: WeakMap<object, string>,
    private readonly grammar: 'MySQL' | 'MariaDB',
  ) {}

  select(sel: Obj, outer: Scope, ctes: Ctes, top: boolean): string[] | null {
    for (const key of Object.keys(sel)) {
      if (!SELECT_KEYS.has(key)) throw new ProtectionRefusedError(`the ${key} clause is not supported`);
    }
    if (sel.type !== 'select')
      throw new ProtectionRefusedError(`${String(sel.type).toUpperCase()} in this position is refused`);
    if (isObj(sel.into) && sel.into.position) throw new ProtectionRefusedError('SELECT ... INTO is refused');
    const visible = sel.with ? [...ctes, this.with(list(sel.with), outer, ctes)] : ctes;
    const level: Level = { entries: [], using: new Set() };
    for (const item of list(sel.from)) this.fromItem(item, level, outer, visible);
    const scope = outer.push(level);
    this.clause = 'field list';
    const { columns, outputs } = this.targets(list(sel.columns), level, scope, visible, top);
    sel.columns = columns;
    this.clause = 'where clause';
    sel.where = this.expr(sel.where, scope, visible);
    // GROUP BY and HAVING look in FROM first, ORDER BY in the select list first (MySQL manual,
    // "Problems with Column Aliases"); a bare output name is already a protected value.
    const known = outputs.filter((o): o is string => o !== null);
    this.clause = 'group statement';
    if (isObj(sel.groupby))
      sel.groupby.columns = list(sel.groupby.columns).map((g) => this.key(g, scope, visible, known, false));
    this.clause = 'having clause';
    sel.having = this.key(sel.having, scope, visible, known, false);
    this.clause = 'window specification';
    sel.window = this.expr(sel.window, scope, visible);
    this.clause = 'order clause';
    for (const o of list(sel.orderby)) if (isObj(o)) o.expr = this.key(o.expr, scope, visible, known, true);
    sel.limit = this.expr(sel.limit, scope, visible);
    if (isObj(sel._next)) this.select(sel._next, outer, visible, top);
    return outputs.every((o) => o !== null) ? (outputs as string[]) : null;
  }

  with(items: unknown[], outer: Scope, ctes: Ctes): Map<string, string[] | null> {
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

  fromItem(item: unknown, level: Level, outer: Scope, ctes: Ctes): void {
    if (!isObj(item)) throw new ProtectionRefusedError('this FROM item is not supported');
    if (item.type === 'dual') return;
    const alias = nameOf(item.as);
    let entry: Entry;
    // A JOIN binds tighter than a comma: `a, b JOIN c ON …` joins b and c, and its ON sees only
    // them (and the outer queries). An item without `join` starts such a group.
    if (!item.join) level.group = { start: level.entries.length, using: new Set() };
    if (isObj(item.expr) && isObj(item.expr.ast)) {
      // A derived table sees the items before it only when LATERAL (MySQL 8.0.14).
      const lateral = outer.push({ entries: [...level.entries], using: new Set(level.using) });
      const out = this.select(item.expr.ast, item.lateral ? lateral : outer, ctes, false);
      entry = { kind: 'derived', refName: alias ?? '', columns: out };
    } else if (typeof item.table === 'string' && !item.expr) {
      entry = this.relation(nameOf(item.db), item.table, alias, ctes);
    } else {
      throw new ProtectionRefusedError('this FROM item is not supported');
    }
    level.entries.push(entry);
    const using = list(item.using).map((u) => nameOf(u) ?? '');
    for (const u of using) checkUsing(this.rules, u, level);
    for (const u of using) level.using.add(u);
    for (const u of using) level.group?.using.add(u);
    if (item.on) {
      this.clause = 'on clause';
      const group = level.group ?? { start: 0, using: level.using };
      const sides = { entries: level.entries.slice(group.start), using: new Set(group.using) };
      item.on = this.expr(item.on, outer.push(sides), ctes);
    }
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
    if (!rel)
      throw new UnknownObjectError(`Table '${db ?? this.schema.searchPath[0] ?? ''}.${name}' doesn't exist`);
    return baseEntry(rel, alias, [], db);
  }

  /**
   * The select list, `*` expanded so each protected column is masked. Every item whose printed
   * text would differ from what was written is named explicitly with the name the server gives
   * the written item (its column name, or its text), so neither a mask nor the salt nor the
   * printer's spelling shows in a column name; inner levels are named so outer references
   * resolve against the server's names.
   */
  private targets(
    columns: unknown[],
    level: Level,
    scope: Scope,
    ctes: Ctes,
    top: boolean,
  ): { columns: unknown[]; outputs: Array<string | null> } {
    const out: unknown[] = [];
    const outputs: Array<string | null> = [];
    for (const c of columns) {
      if (!isObj(c)) throw new ProtectionRefusedError('this select list is not supported');
      const ref = isObj(c.expr) && c.expr.type === 'column_ref' ? c.expr : null;
      if (ref && nameOf(ref.column) === '*') {
        const table = nameOf(ref.table);
        const entries = table === null ? level.entries : [scope.findEntry(qualifier(ref))];
        if (table === null && level.using.size > 0)
          throw new ProtectionRefusedError('* over a JOIN USING is not supported: list the columns');
        for (const e of entries) {
          if (!e) throw new UnknownObjectError(`Unknown table '${table}'`);
          const expanded = this.expand(e);
          out.push(...expanded.columns);
          outputs.push(...expanded.outputs);
        }
        continue;
      }
      const alias = nameOf(c.as);
      // The server names a literal after its value, except `.5`, which normalize() spelled 0.5.
      const literal =
        isObj(c.expr) && LITERALS.has(String(c.expr.type)) && !this.texts.get(c)?.trimStart().startsWith('.');
      const before = alias === null && !ref && !literal ? this.original(c) : null;
      c.expr = this.expr(c.expr, scope, ctes);
      let name = alias;
      if (alias === null && ref && (c.expr !== ref || !top)) name = nameOf(ref.column);
      else if (before !== null) name = before;
      else if (alias === null && ref) name = nameOf(ref.column);
      if (alias === null && name !== null && (!ref || c.expr !== ref || !top)) c.as = escapeName(name);
      outputs.push(name);
      out.push(c);
    }
    return { columns: out, outputs };
  }

  /** The name the server gives an unaliased expression item as written. */
  private original(c: Obj): string {
    const text = this.texts.get(c);
    if (text !== undefined) return itemName(text);
    // The item's text was not found: its printed original, never the rewritten one.
    try {
      const printed = sqlParser().sqlify(
        { type: 'select', columns: [{ expr: structuredClone(c.expr), as: null }] } as never,
        { database: this.grammar },
      );
      return printed.replace(/^SELECT\s+/i, '');
    } catch {
      return '?column?';
    }
  }

  private expand(entry: Entry): { columns: unknown[]; outputs: Array<string | null> } {
    if (entry.kind === 'derived') {
      if (!entry.refName) throw new ProtectionRefusedError('* over an unaliased subquery is not supported');
      return {
        columns: [{ expr: { type: 'column_ref', table: entry.refName, column: '*' }, as: null }],
        outputs: entry.columns ?? [null],
      };
    }
    return {
      columns: entry.colNames.map((name, i) => ({
        expr: protectMysql(this.rules, entry, i, { type: 'column_ref', table: entry.refName, column: name }),
        as: escapeName(name),
      })),
      outputs: entry.colNames,
    };
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
      case 'var':
        if (n.prefix === '@@')
          throw new ProtectionRefusedError(`reading the server setting @@${String(n.name)} is refused`);
        break;
      case 'function':
        checkFunction(n.name, this.schema);
        break;
      case 'aggr_func':
        checkFunction({ name: [{ value: String(n.name) }] }, this.schema);
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
    const masked = protectMysql(this.rules, r.entry, r.entry.rel.columns.indexOf(r.column), n);
    // CONVERT(col USING cs) and col COLLATE x hang on the reference: keep them on the mask.
    if (masked !== n && isObj(masked)) {
      if (n.suffix) masked.suffix = n.suffix;
      if (n.collate) masked.collate = n.collate;
    }
    return masked;
  }
}
