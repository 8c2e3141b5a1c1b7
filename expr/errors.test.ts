// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are template source.
import { describe, expect, it } from 'vitest';
import { ExprError, InputError } from './errors.ts';
import * as expr from './index.ts';

function caught(fn: () => unknown): ExprError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ExprError) return err;
    throw err;
  }
  throw new Error('expected an ExprError');
}

describe('ExprError', () => {
  it('is an Error with a code, the position, the source and a located message', () => {
    const err = caught(() => expr.parseExpression('a == = b'));
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ExprError');
    expect(err.code).toBe('syntax');
    expect(err.position).toBe(5);
    expect(err.source).toBe('a == = b');
    expect(err.reason).toBe("'=' alone is not an operator; use '==' to compare");
    expect(err.message).toBe("'=' alone is not an operator; use '==' to compare (column 6)");
    expect(err.excerpt()).toBe('a == = b\n     ^');
    expect(err.toJSON()).toEqual({ code: 'syntax', message: err.message, position: 5 });
  });

  it('names the line and column in a multi-line source', () => {
    const source = 'SELECT *\nFROM t\nWHERE a = ${missing}';
    const err = caught(() => expr.renderSql(source, { inputs: {}, steps: {} }, 'postgres'));
    expect([err.line, err.column]).toEqual([3, 13]);
    expect(err.message).toMatch(/\(line 3, column 13\)$/);
    expect(err.excerpt()).toBe('WHERE a = ${missing}\n            ^');
  });

  it('InputError is an ExprError with code invalid_input', () => {
    const err = caught(() => expr.parseInputValue('integer', 'x', { fromText: true, name: 'n' }));
    expect(err).toBeInstanceOf(InputError);
    expect(err.name).toBe('InputError');
    expect(err.code).toBe('invalid_input');
  });

  // One case per code, through the public API.
  const ctx: expr.EvalContext = {
    inputs: { n: 1, s: 'x', l: [1], o: {}, u: undefined },
    steps: { skipped: { status: 'skipped' } },
  };
  const cases: Array<[string, () => unknown]> = [
    ['syntax', () => expr.parseExpression('(')],
    ['too_deep', () => expr.parseExpression(`${'('.repeat(200)}1${')'.repeat(200)}`)],
    ['unknown_input', () => expr.evaluateCondition('missing', ctx)],
    ['unknown_step', () => expr.evaluateCondition('step.none.output', ctx)],
    ['step_unavailable', () => expr.evaluateCondition('step.skipped.output', ctx)],
    ['missing_property', () => expr.evaluateCondition('o.x', ctx)],
    ['forbidden_property', () => expr.parseExpression('o.__proto__')],
    ['invalid_index', () => expr.evaluateCondition('l[1]', ctx)],
    ['not_indexable', () => expr.evaluateCondition('n.x', ctx)],
    ['type_mismatch', () => expr.evaluateCondition('n == s', ctx)],
    ['not_boolean', () => expr.evaluateCondition('n', ctx)],
    ['unsupported_value', () => expr.evaluateCondition('u', ctx)],
    ['invalid_json', () => expr.renderJson('{"a": ${n}', ctx)],
    ['sql_quoted_reference', () => expr.renderSql("'${s}'", ctx, 'mysql')],
    ['sql_raw_placeholder', () => expr.renderSql('SELECT ?', ctx, 'mysql')],
    ['sql_unbindable_value', () => expr.renderSql('SELECT ${l}', ctx, 'mysql')],
    ['invalid_input', () => expr.parseInputValue('boolean', 'maybe', { fromText: true })],
  ];
  it.each(cases)('%s', (code, fn) => {
    const err = caught(fn);
    expect(err.code).toBe(code);
    expect(err.message.length).toBeGreaterThan(10);
  });
});
