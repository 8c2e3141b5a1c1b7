// What the MySQL/MariaDB rewriter refuses outright, whatever the policy: system schemas, clauses it
// does not understand, string literals the server's SQL mode could read differently, and functions
// outside the allowlist (functions.ts).
import { MYSQL_FUNCTIONS } from './functions.ts';
import { isObj, list, nameOf, type Obj } from './mysql-ast.ts';
import { ProtectionRefusedError } from './rules.ts';

/** Schemas of the server itself, never read under a policy. */
export const SYSTEM_SCHEMAS = new Set(['information_schema', 'mysql', 'performance_schema', 'sys']);
/** Keys of a select node the rewriter understands; any other clause is refused. */
export const SELECT_KEYS = new Set([
  'with',
  'type',
  'options',
  'distinct',
  'columns',
  'into',
  'from',
  'where',
  'groupby',
  'having',
  'orderby',
  'collate',
  'limit',
  'locking_read',
  'window',
  '_next',
  'set_op',
  'parentheses',
  'parentheses_symbol',
  'tableList',
  'columnList',
]);

/**
 * A quote or backslash inside a literal reads differently under NO_BACKSLASH_ESCAPES, and a
 * double-quoted literal is an identifier under ANSI_QUOTES: the server's SQL mode could then
 * see code where the parser saw a string. Such literals are refused (values belong in
 * parameters), and double quotes are printed as single quotes.
 */
export function stringLiteral(n: Obj): Obj {
  if (typeof n.value !== 'string' || /['"\\]/.test(n.value)) {
    throw new ProtectionRefusedError(
      'a string literal with quotes or backslashes is refused under a policy; pass it as a parameter',
    );
  }
  if (n.type === 'double_quote_string') n.type = 'single_quote_string';
  return n;
}

/** A function call must be on the allowlist and unqualified. */
export function checkFunction(name: unknown): void {
  const parts = isObj(name) ? list(name.name).map(nameOf) : [];
  const fname = parts.length === 1 ? parts[0]?.toLowerCase() : undefined;
  if (!fname || (isObj(name) && name.schema) || !MYSQL_FUNCTIONS.has(fname)) {
    throw new ProtectionRefusedError(
      `function ${parts.join('.') || '(unknown)'} is not on the list of functions allowed under a policy`,
    );
  }
}
