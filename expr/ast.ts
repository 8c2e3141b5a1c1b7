/**
 * The syntax tree of an expression. Plain JSON-serializable objects, so a parsed condition can be
 * stored or passed to a Temporal workflow as it is. `pos` is the offset in the source the node's
 * errors point at: the first character for references and literals, the operator for operators,
 * the `.` or `[` for member access and indexing.
 */
export type Expr =
  | LiteralExpr
  | InputExpr
  | StepExpr
  | MemberExpr
  | IndexExpr
  | NotExpr
  | CompareExpr
  | LogicalExpr;

export type LiteralValue = string | number | boolean | null;
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type LogicalOp = '&&' | '||';

interface Node {
  pos: number;
  /** Set on the root by `parseExpression`: the text the positions refer to. */
  source?: string;
}

/** `42`, `-1.5e3`, `"text"`, `'text'`, `true`, `false`, `null`. */
export interface LiteralExpr extends Node {
  kind: 'literal';
  value: LiteralValue;
}

/** A workflow input: `amount` or `${amount}`. */
export interface InputExpr extends Node {
  kind: 'input';
  name: string;
}

/** The output of an earlier step: `step.<name>.output` (or `step["any name"].output`). */
export interface StepExpr extends Node {
  kind: 'step';
  name: string;
}

/** `object.name`. */
export interface MemberExpr extends Node {
  kind: 'member';
  object: Expr;
  name: string;
}

/** `object[index]`: a number indexes a list, a string names a property. */
export interface IndexExpr extends Node {
  kind: 'index';
  object: Expr;
  index: Expr;
}

/** `not operand` or `!operand`. */
export interface NotExpr extends Node {
  kind: 'not';
  operand: Expr;
}

export interface CompareExpr extends Node {
  kind: 'compare';
  op: CompareOp;
  left: Expr;
  right: Expr;
}

export interface LogicalExpr extends Node {
  kind: 'logical';
  op: LogicalOp;
  left: Expr;
  right: Expr;
}

/** Words that cannot name an input. `step` starts a step reference. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'null', 'not', 'step']);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True when `name` can be written bare (`${name}`, `.name`): letters, digits and `_`, not starting
 *  with a digit. */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** True when `name` can be a workflow input key that expressions can reference. */
export function isValidInputName(name: string): boolean {
  return IDENTIFIER.test(name) && !RESERVED_WORDS.has(name);
}
