// Helpers over node-sql-parser's tree for MySQL/MariaDB: reading names (which the parser writes
// in several shapes), quoting identifiers, and parsing the small expressions a rewrite substitutes.
import { astify } from './parse.ts';

/** A node of node-sql-parser's tree. */
export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** node-sql-parser writes a name as a string or as `{ value }` / `{ expr: { value } }`. */
export function nameOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (!isObj(v)) return null;
  if (typeof v.value === 'string') return v.value;
  return isObj(v.expr) ? nameOf(v.expr) : null;
}

/** The first keyword, for a clear refusal of what the parser or the policy does not take. */
export function leadingKeyword(sql: string): string {
  const stripped = sql.replace(/^(\s|\(|--[^\n]*\n|#[^\n]*\n|\/\*[\s\S]*?\*\/)+/, '');
  return /^[a-z_]+/i.exec(stripped)?.[0]?.toUpperCase() ?? '';
}

/** The `db.table` qualifier of a column reference, as scope.ts resolves it. */
export function qualifier(ref: Obj): string[] {
  const table = nameOf(ref.table);
  const db = nameOf(ref.db) ?? nameOf(ref.schema);
  return table === null ? [] : db === null ? [table] : [db, table];
}

/** The name a bare column reference gives its output column. */
export function columnName(expr: unknown): string | null {
  return isObj(expr) && expr.type === 'column_ref' ? nameOf(expr.column) : null;
}

/** A backtick-quoted identifier. */
export function tick(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

const exprCache = new Map<string, unknown>();
/** The expression node of `text`, parsed once and cloned for each use. */
export function parseExpr(text: string): unknown {
  let node = exprCache.get(text);
  if (node === undefined) {
    const ast = astify(`SELECT ${text} AS x`, 'MariaDB') as unknown as Obj;
    node = (list(ast.columns)[0] as Obj).expr;
    if (exprCache.size > 5000) exprCache.clear();
    exprCache.set(text, node);
  }
  return structuredClone(node);
}
