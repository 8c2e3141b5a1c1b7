// What the Postgres rewriter refuses outright, whatever the policy: statements other than SELECT,
// clauses it does not understand, and functions and operators that could reach data by
// themselves (functions.ts). Refusing is the safe answer to anything the rewriter cannot prove safe.

import type { DbSchema } from '../../sql/catalog.ts';
import { as, type Fields, isObj, kindOf } from '../../sql/pg-tree.ts';
import { POSTGRES_FALLBACK_FUNCTIONS, POSTGRES_FALLBACK_OPERATORS, postgresRefusal } from './functions.ts';
import { ProtectionRefusedError, UnknownObjectError } from './rules.ts';

/** Statement kinds that are never run under a policy, with the name the refusal uses. */
export const STATEMENT_NAMES: Record<string, string> = {
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
export const SELECT_KEYS = new Set([
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

/** A SELECT, wrapped (`{ SelectStmt }`) or bare (set-operation arms); anything else is refused. */
export function mustSelect(v: unknown): Fields {
  const sel = as(v, 'SelectStmt') ?? (isObj(v) && kindOf(v) === null && 'op' in v ? v : null);
  if (!sel)
    throw new ProtectionRefusedError(`${kindOf(v) ?? 'this statement'} in this position is not supported`);
  return sel;
}

/**
 * A function may run when it is a built-in of pg_catalog that cannot reach data by itself
 * (functions.ts). A qualified name outside pg_catalog, or a name a user-defined function also
 * has (it could be chosen by overload resolution), is user-defined code and refused; a name
 * the server does not have answers as the server would.
 */
export function checkFunction(fname: string[], schema: DbSchema): void {
  const name = fname.at(-1)?.toLowerCase() ?? '';
  const shown = fname.join('.');
  const qualified = fname.length > 1;
  if (qualified && !(fname.length === 2 && fname[0] === 'pg_catalog')) {
    throw new ProtectionRefusedError(
      `${shown}() is a user-defined function; only built-in functions run under a policy`,
    );
  }
  const reason = postgresRefusal(name);
  if (reason) throw new ProtectionRefusedError(`function ${shown}() ${reason}, so it is refused`);
  const r = schema.routines;
  if (!r) {
    if (POSTGRES_FALLBACK_FUNCTIONS.has(name)) return;
    throw new ProtectionRefusedError(`function ${shown}() is not known to be built in, so it is refused`);
  }
  if (!qualified && r.userFunctions.has(name)) {
    throw new ProtectionRefusedError(
      `${shown}() is a user-defined function; only built-in functions run under a policy`,
    );
  }
  if (!r.builtinFunctions.has(name)) throw new UnknownObjectError(`function ${shown}() does not exist`);
}

/** An operator must be built in, and no user-defined operator may share its symbol. */
export function checkOperator(op: string[], schema: DbSchema): void {
  const symbol = op.at(-1) ?? '';
  const qualified = op.length > 1 && !(op.length === 2 && op[0] === 'pg_catalog');
  const r = schema.routines;
  const builtin = r ? r.builtinOperators.has(symbol) : POSTGRES_FALLBACK_OPERATORS.has(symbol);
  if (qualified || !builtin || r?.userOperators.has(symbol)) {
    // A user-defined operator calls a user-defined function.
    throw new ProtectionRefusedError(
      `operator ${op.join('.')} is user-defined or unknown; only built-in operators run under a policy`,
    );
  }
}
