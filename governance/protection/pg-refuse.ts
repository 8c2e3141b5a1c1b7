// What the Postgres rewriter refuses outright, whatever the policy: statements other than SELECT,
// clauses it does not understand, and functions and operators outside the allowlists
// (functions.ts). Refusing is the safe answer to anything the rewriter cannot prove safe.
import { POSTGRES_FUNCTIONS, POSTGRES_OPERATORS } from './functions.ts';
import { as, type Fields, isObj, kindOf } from './pg-ast.ts';
import { ProtectionRefusedError } from './rules.ts';

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

/** A function call must be on the allowlist, unqualified or in pg_catalog. */
export function checkFunction(fname: string[]): void {
  const name = fname.at(-1)?.toLowerCase() ?? '';
  const schemaOk = fname.length === 1 || (fname.length === 2 && fname[0] === 'pg_catalog');
  if (!schemaOk || !POSTGRES_FUNCTIONS.has(name)) {
    throw new ProtectionRefusedError(
      `function ${fname.join('.')} is not on the list of functions allowed under a policy`,
    );
  }
}

/** An operator must be on the allowlist, unqualified or in pg_catalog. */
export function checkOperator(op: string[]): void {
  const symbol = op.at(-1) ?? '';
  const schemaOk = op.length === 1 || (op.length === 2 && op[0] === 'pg_catalog');
  if (!schemaOk || !POSTGRES_OPERATORS.has(symbol)) {
    throw new ProtectionRefusedError(`operator ${op.join('.')} is not allowed under a policy`);
  }
}
