// What the MySQL/MariaDB rewriter refuses outright, whatever the policy: system schemas, clauses it
// does not understand, string literals the server's SQL mode could read differently, names that
// would print unsafely, and functions that could reach data by themselves (functions.ts).

import type { DbSchema } from '../../sql/catalog.ts';
import { isObj, list, nameOf, type Obj } from '../../sql/mysql-tree.ts';
import { MYSQL_BUILTINS, mysqlRefusal } from './functions.ts';
import { ProtectionRefusedError, UnknownObjectError } from './rules.ts';

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

/**
 * A function may run when it is a built-in that cannot reach data by itself (functions.ts). A
 * qualified name, or a stored function of the database, is user-defined code and refused; a
 * name the server does not have answers as the server would.
 */
export function checkFunction(name: unknown, schema: DbSchema): void {
  const parts = isObj(name) ? list(name.name).map(nameOf) : [];
  const db = isObj(name) ? nameOf(name.schema) : null;
  const shown = [db, ...parts].filter((p) => p !== null).join('.') || '(unknown)';
  const fname = parts.at(-1)?.toLowerCase();
  if (!fname || parts.length !== 1 || db !== null) {
    throw new ProtectionRefusedError(
      `${shown}() is a stored function; only built-in functions run under a policy`,
    );
  }
  const reason = mysqlRefusal(fname);
  if (reason) throw new ProtectionRefusedError(`function ${shown}() ${reason}, so it is refused`);
  if (MYSQL_BUILTINS.has(fname) || QUANTIFIERS.has(fname)) return;
  if (schema.routines === null || schema.routines.userFunctions.has(fname)) {
    throw new ProtectionRefusedError(
      `${shown}() is a stored function; only built-in functions run under a policy`,
    );
  }
  throw new UnknownObjectError(`FUNCTION ${schema.searchPath[0] ?? ''}.${shown} does not exist`);
}

/** `= ANY (SELECT …)` and its kin are read as calls of these names. */
const QUANTIFIERS = new Set(['any', 'some', 'all']);

/**
 * sqlify prints identifiers between backquotes without doubling the ones inside, so a name
 * with a backquote (an alias written as a string literal, say) could end the identifier and
 * start SQL of its own. Names are checked before anything is printed.
 */
export function checkIdentifiers(n: unknown): void {
  if (Array.isArray(n)) {
    for (const x of n) checkIdentifiers(x);
    return;
  }
  if (!isObj(n)) return;
  for (const key of ['as', 'table', 'column', 'db', 'schema']) {
    const name = key === 'as' || typeof n[key] === 'string' ? nameOf(n[key]) : null;
    if (name?.includes('`'))
      throw new ProtectionRefusedError('a name containing a backquote (`) is refused under a policy');
  }
  // Printed without any quotes at all: a collation, a CONVERT … USING character set, a window name.
  const bare = [
    isObj(n.collate) && isObj(n.collate.collate) ? n.collate.collate.name : undefined,
    n.type === 'collate' && isObj(n.collate) ? n.collate.name : undefined,
    n.suffix,
    isObj(n.as_window_specification) ? undefined : n.as_window_specification,
    typeof n.name === 'string' && 'as_window_specification' in n ? n.name : undefined,
  ];
  for (const word of bare) {
    if (word !== undefined && word !== null && !/^[A-Za-z0-9_ ]*$/.test(String(word)))
      throw new ProtectionRefusedError(
        `the name ${String(word)} is refused under a policy: use a plain name`,
      );
  }
  for (const [k, v] of Object.entries(n)) if (k !== 'tableList' && k !== 'columnList') checkIdentifiers(v);
}
