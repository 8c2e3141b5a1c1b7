import type { CompareOp, Expr } from './ast.ts';
import { compareValues, equalValues } from './compare.ts';
import { ExprError } from './errors.ts';
import { parseExpression } from './parser.ts';
import { describe, type Value } from './values.ts';

/** What a step looks like to expressions: its status and, once succeeded, its output
 *  (SPEC.md 2.1 "Step output shapes"). */
export interface StepState {
  status: 'succeeded' | 'skipped' | 'failed' | 'pending';
  output?: unknown;
}

/** The values references resolve in: `${name}` in `inputs`, `step.<name>.output` in `steps`. */
export interface EvalContext {
  inputs: Record<string, unknown>;
  steps: Record<string, StepState>;
}

/**
 * Evaluates a parsed expression. References resolve in `ctx`; a missing input, a missing property or
 * an unavailable step is an ExprError, never `undefined`. Only own properties are read. `&&` and `||`
 * evaluate their right side only when needed. Throws only ExprError.
 */
export function evaluate(ast: Expr, ctx: EvalContext): Value {
  try {
    return evalNode(ast, ctx) as Value;
  } catch (err) {
    throw locate(err, ast.source);
  }
}

/**
 * Evaluates a step condition or condition action (SPEC.md 2.1) to true or false. `${x} > 3` and
 * `x > 3` are the same. A result that is not a boolean is an ExprError (`not_boolean`), not
 * truthiness: `${count}` alone must be written `${count} > 0`.
 */
export function evaluateCondition(condition: string | Expr, ctx: EvalContext): boolean {
  const ast = typeof condition === 'string' ? parseExpression(condition) : condition;
  const result = evaluate(ast, ctx);
  if (result === true || result === false) return result;
  throw new ExprError(
    'not_boolean',
    `a condition must be true or false, but this one gives ${describe(result)}; compare it, e.g. ... > 0 or ... == "yes"`,
    0,
    ast.source ?? '',
  );
}

/** Gives an error raised during evaluation (which knows only its offset) the source text. */
export function locate(err: unknown, source: string | undefined): unknown {
  return err instanceof ExprError && err.source === '' && source !== undefined ? err.withSource(source) : err;
}

/** The evaluator proper, without the error-locating wrapper: templates call it for each `${}`. */
export function evalNode(node: Expr, ctx: EvalContext): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'input':
      return readInput(ctx, node.name, node.pos);
    case 'step':
      return readStep(ctx, node.name, node.pos);
    case 'member':
      return readMember(evalNode(node.object, ctx), node.name, node.pos);
    case 'index':
      return readIndex(evalNode(node.object, ctx), evalNode(node.index, ctx), node.pos);
    case 'not': {
      const value = evalNode(node.operand, ctx);
      if (value === true) return false;
      if (value === false) return true;
      throw notBoolean("'not'", value, node.operand.pos);
    }
    case 'logical': {
      const left = evalNode(node.left, ctx);
      if (left !== true && left !== false) throw notBoolean(`'${node.op}'`, left, node.left.pos);
      // Short-circuit: `false && x` and `true || x` do not evaluate x.
      if (node.op === '&&' ? !left : left) return left;
      const right = evalNode(node.right, ctx);
      if (right !== true && right !== false) throw notBoolean(`'${node.op}'`, right, node.right.pos);
      return right;
    }
    case 'compare':
      return compare(node.op, evalNode(node.left, ctx), evalNode(node.right, ctx), node.pos);
  }
}

function compare(op: CompareOp, left: unknown, right: unknown, pos: number): boolean {
  // Fast path: two numbers (values from the context are finite; non-finite ones are refused on read).
  if (typeof left === 'number' && typeof right === 'number') {
    switch (op) {
      case '==':
        return left === right;
      case '!=':
        return left !== right;
      case '<':
        return left < right;
      case '<=':
        return left <= right;
      case '>':
        return left > right;
      case '>=':
        return left >= right;
    }
  }
  switch (op) {
    case '==':
      return equalValues(left, right, op, pos);
    case '!=':
      return !equalValues(left, right, op, pos);
    case '<':
      return compareValues(left, right, op, pos) < 0;
    case '<=':
      return compareValues(left, right, op, pos) <= 0;
    case '>':
      return compareValues(left, right, op, pos) > 0;
    case '>=':
      return compareValues(left, right, op, pos) >= 0;
  }
}

function readInput(ctx: EvalContext, name: string, pos: number): unknown {
  const inputs = ctx.inputs;
  if (typeof inputs === 'object' && inputs !== null && Object.hasOwn(inputs, name)) {
    return checked(inputs[name], pos, `input '${name}'`);
  }
  const known = typeof inputs === 'object' && inputs !== null ? listNames(Object.keys(inputs)) : 'none';
  throw new ExprError('unknown_input', `there is no input named '${name}' (inputs: ${known})`, pos, '');
}

function readStep(ctx: EvalContext, name: string, pos: number): unknown {
  const steps = ctx.steps;
  if (!(typeof steps === 'object' && steps !== null && Object.hasOwn(steps, name))) {
    const known = typeof steps === 'object' && steps !== null ? listNames(Object.keys(steps)) : 'none';
    throw new ExprError('unknown_step', `there is no step named '${name}' (steps: ${known})`, pos, '');
  }
  const state: unknown = steps[name];
  const status = typeof state === 'object' && state !== null ? (state as StepState).status : undefined;
  if (status !== 'succeeded') throw new ExprError('step_unavailable', stepUnavailable(name, status), pos, '');
  const output = (state as StepState).output;
  if (output === undefined) {
    throw new ExprError(
      'step_unavailable',
      `step '${name}' has no output (approval and condition steps produce none)`,
      pos,
      '',
    );
  }
  return checked(output, pos, `the output of step '${name}'`);
}

function stepUnavailable(name: string, status: unknown): string {
  switch (status) {
    case 'skipped':
      return `step '${name}' was skipped (its condition was false), so it has no output`;
    case 'pending':
      return `step '${name}' has not run yet; a step can use only the outputs of steps before it`;
    case 'failed':
      return `step '${name}' failed, so it has no output`;
    default:
      return `step '${name}' has no usable state`;
  }
}

function readMember(object: unknown, name: string, pos: number): unknown {
  if (name === '__proto__') {
    throw new ExprError('forbidden_property', "the property '__proto__' cannot be read", pos, '');
  }
  if (typeof object === 'object' && object !== null) {
    // Own properties only: `constructor`, `toString` and the rest of the prototype are not data.
    if (Object.hasOwn(object, name)) {
      return checked((object as Record<string, unknown>)[name], pos, `property '${name}'`);
    }
    const what = Array.isArray(object)
      ? `a list has no property '${name}' (only indexes such as [0], and length)`
      : `the object has no property '${name}' (properties: ${listNames(Object.keys(object))})`;
    throw new ExprError('missing_property', what, pos, '');
  }
  throw new ExprError('not_indexable', `cannot read '${name}' of ${describe(object)}`, pos, '');
}

function readIndex(object: unknown, index: unknown, pos: number): unknown {
  if (typeof index === 'string') return readMember(object, index, pos);
  if (typeof index !== 'number') {
    throw new ExprError(
      'invalid_index',
      `an index must be a number or a quoted name, not ${describe(index)}`,
      pos,
      '',
    );
  }
  if (Array.isArray(object)) {
    if (Number.isInteger(index) && index >= 0 && index < object.length) {
      return checked(object[index], pos, `item ${index}`);
    }
    const reason =
      !Number.isInteger(index) || index < 0
        ? `list indexes are whole numbers from 0, not ${index}`
        : `index ${index} is past the end of the list (it has ${object.length} item${object.length === 1 ? '' : 's'})`;
    throw new ExprError('invalid_index', reason, pos, '');
  }
  if (typeof object === 'object' && object !== null) {
    throw new ExprError(
      'invalid_index',
      `an object's properties are named with quotes, e.g. ["key"], not [${index}]`,
      pos,
      '',
    );
  }
  throw new ExprError('not_indexable', `cannot index ${describe(object)}`, pos, '');
}

// Values read from the context must be JSON; undefined, functions, bigints and NaN are refused
// where they are read, so no operator ever meets them.
function checked(value: unknown, pos: number, what: string): unknown {
  const t = typeof value;
  if (t === 'string' || t === 'boolean' || t === 'object' || (t === 'number' && Number.isFinite(value)))
    return value;
  throw new ExprError(
    'unsupported_value',
    `${what} is ${describe(value)}, which expressions cannot use`,
    pos,
    '',
  );
}

function notBoolean(operator: string, value: unknown, pos: number): ExprError {
  return new ExprError('not_boolean', `${operator} needs true or false, but got ${describe(value)}`, pos, '');
}

function listNames(names: string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, 10).join(', ');
  return names.length > 10 ? `${shown}, ...` : shown;
}
