// Reading a MySQL/MariaDB statement into node-sql-parser's tree: which grammar reads it, what
// normalize() spelled differently put back, and the text each select item was written with.

import { isObj, list, type Obj } from '../../sql/mysql-tree.ts';
import { astify } from '../../sql/parse.ts';
import { selectLists } from './mysql-text.ts';
import { ProtectionParseError } from './rules.ts';

/**
 * Parses with the server's grammar, else MySQL's (node-sql-parser reads a named WINDOW and
 * STRAIGHT_JOIN only there); the statement is printed with the grammar that read it.
 */
export function parseMysql(
  sql: string,
  flavor: 'MySQL' | 'MariaDB',
): { ast: unknown; grammar: 'MySQL' | 'MariaDB' } {
  let first: unknown;
  for (const grammar of [flavor, flavor === 'MariaDB' ? 'MySQL' : 'MariaDB'] as const) {
    try {
      return { ast: astify(sql, grammar, { copy: true }), grammar };
    } catch (err) {
      first ??= err;
    }
  }
  const at = (first as { location?: { start?: { line?: number; column?: number; offset?: number } } })
    .location?.start;
  const near = at?.offset !== undefined ? sql.slice(at.offset, at.offset + 40).split('\n')[0] : '';
  // Data protection is the reason: the server may well read what this parser does not.
  throw new ProtectionParseError(
    near
      ? `this statement could not be analyzed near '${near}' (line ${at?.line ?? 1}); rewrite that part, or ask an admin to run it`
      : 'this statement could not be analyzed; rewrite it, or ask an admin to run it',
  );
}

/** Puts back what normalize() spelled differently: JSON_ARRAYAGG … ORDER BY. */
export function restoreMarks(n: unknown, marks: { jsonArrayagg: boolean }): void {
  if (!marks.jsonArrayagg) return;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (!isObj(v)) return;
    for (const [k, x] of Object.entries(v)) if (k !== 'tableList' && k !== 'columnList') walk(x);
    if (v.type === 'aggr_func' && String(v.name).toUpperCase() === 'GROUP_CONCAT') v.name = 'JSON_ARRAYAGG';
  };
  walk(n);
}

/**
 * The text each select item was written with, by the item's node: MariaDB names an unaliased
 * item after it. Select nodes are visited in the order their SELECT keywords appear; where the
 * counts disagree, that list is left out (its items are then named from the tree).
 */
export function itemTexts(stmt: Obj, sql: string): WeakMap<object, string> {
  const selects: Obj[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (!isObj(n)) return;
    if (n.type === 'select' && 'columns' in n) {
      visit(n.with);
      selects.push(n);
      for (const k of ['columns', 'from', 'where', 'groupby', 'having', 'window', 'orderby', 'limit'])
        visit(n[k]);
      visit(n._next);
      return;
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'tableList' && k !== 'columnList') visit(v);
  };
  visit(stmt);
  const lists = selectLists(sql);
  const texts = new WeakMap<object, string>();
  if (lists.length !== selects.length) return texts;
  selects.forEach((sel, i) => {
    const columns = list(sel.columns);
    const items = lists[i]!;
    if (columns.length !== items.length) return;
    columns.forEach((c, j) => {
      if (isObj(c)) texts.set(c, items[j]!);
    });
  });
  return texts;
}
