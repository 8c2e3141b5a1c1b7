// How the MySQL/MariaDB rewriter masks: the expression that replaces a reference to a protected
// column (by its treatment in the policy), the USING check, and how names are handed to sqlify.
import { parseExpr, tick } from '../../sql/mysql-tree.ts';
import { MASK, ProtectionRefusedError, type RuleBook } from './rules.ts';
import type { BaseEntry, Level } from './scope.ts';

/** The expression that replaces column `i` of a base entry (the reference itself when shown). */
export function protectMysql(rules: RuleBook, entry: BaseEntry, i: number, ref: unknown): unknown {
  const col = entry.rel.columns[i]!;
  const t = rules.treatment(entry.rel.schema, entry.rel.name, col.name);
  const c = `${tick(entry.refName)}.${tick(entry.colNames[i]!)}`;
  switch (t.action) {
    case 'show':
      return ref;
    case 'mask':
      return parseExpr(`'${MASK}'`);
    case 'hide':
      return parseExpr('NULL');
    case 'hash':
      return parseExpr(`MD5(CONCAT('${rules.salt}:', ${c}))`);
    case 'partial':
      return parseExpr(
        `CASE WHEN CHAR_LENGTH(${c}) > ${t.keepFirst + t.keepLast} THEN CONCAT(LEFT(${c}, ${t.keepFirst}), '${MASK}', RIGHT(${c}, ${t.keepLast})) ELSE '${MASK}' END`,
      );
  }
}

/** A USING column is compared across both sides: it must be shown on every base side. */
export function checkUsing(rules: RuleBook, name: string, level: Level): void {
  for (const e of level.entries) {
    if (e.kind !== 'base') continue;
    const i = e.colNames.findIndex((c) => c.toLowerCase() === name.toLowerCase());
    const col = i >= 0 ? e.rel.columns[i] : undefined;
    if (col && !rules.isShown(e.rel.schema, e.rel.name, col.name)) {
      throw new ProtectionRefusedError(
        `JOIN USING (${name}) compares a protected column; join ON it instead`,
      );
    }
  }
}

/** Items the server names after their value, which the printer writes back unchanged. */
export const LITERALS = new Set([
  'single_quote_string',
  'double_quote_string',
  'natural_string',
  'number',
  'bool',
  'null',
  'bit_string',
]);

/** A name for sqlify, which puts it between backquotes as it is. */
export const escapeName = (name: string) => name.replaceAll('`', '``');
