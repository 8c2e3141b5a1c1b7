/**
 * The expression language (SPEC.md 2.1 "Expression language"; user guide in expr/README.md).
 * Pure and deterministic, without Node built-ins: workflow code imports it inside the Temporal sandbox.
 */
export type {
  CompareExpr,
  CompareOp,
  Expr,
  IndexExpr,
  InputExpr,
  LiteralExpr,
  LiteralValue,
  LogicalExpr,
  LogicalOp,
  MemberExpr,
  NotExpr,
  StepExpr,
} from './ast.ts';
export { isIdentifier, isValidInputName, RESERVED_WORDS } from './ast.ts';
export { compareCodePoints, isNumericText } from './compare.ts';
export { ExprError, type ExprErrorCode, InputError } from './errors.ts';
export { type EvalContext, evaluate, evaluateCondition, type StepState } from './evaluate.ts';
export {
  INPUT_TYPES,
  type InputDefinition,
  type InputType,
  type ParseInputOptions,
  parseInputs,
  parseInputValue,
} from './inputs.ts';
export { renderJson } from './json.ts';
export { MAX_NESTING, parseExpression } from './parser.ts';
export { printExpression } from './print.ts';
export {
  clickhouseType,
  placeholder,
  renderSql,
  SQL_STYLES,
  type SqlParam,
  type SqlQuery,
  type SqlStyle,
} from './sql.ts';
export {
  collectReferences,
  type ExprPart,
  parseTemplate,
  type Reference,
  type References,
  renderText,
  type Template,
  type TemplatePart,
  type TextPart,
} from './template.ts';
export { describe as describeValue, typeOf, type Value, type ValueType } from './values.ts';
