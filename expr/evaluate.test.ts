// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { describe, expect, it } from 'vitest';
import type { Expr } from './ast.ts';
import { ExprError, type ExprErrorCode } from './errors.ts';
import { type EvalContext, evaluate, evaluateCondition } from './evaluate.ts';
import { parseExpression } from './parser.ts';

const ctx: EvalContext = {
  inputs: {
    approved: true,
    rejected: false,
    count: 7,
    ratio: 0.5,
    name: 'alice',
    ten: '10',
    big: '9007199254740993',
    nothing: null,
    tags: ['a', 'b'],
    user: { name: 'alice', 'full name': 'Alice A.' },
  },
  steps: {
    q: {
      status: 'succeeded',
      output: {
        rows: [
          [1, 'x'],
          ['42', null],
        ],
        columns: ['id', 'v'],
        command: 'SELECT',
        messages: [],
        num_rows: 2,
      },
    },
    api: {
      status: 'succeeded',
      output: { status_code: 200, body: { user: { profile: { email: 'a@example.com' } }, items: [] } },
    },
    skipped: { status: 'skipped' },
    later: { status: 'pending' },
    broken: { status: 'failed' },
    approve: { status: 'succeeded' },
  },
};

const run = (source: string): unknown => evaluate(parseExpression(source), ctx);

function failure(source: string, context: EvalContext = ctx): ExprError {
  try {
    evaluateCondition(source, context);
  } catch (err) {
    if (err instanceof ExprError) return err;
    throw err;
  }
  throw new Error(`expected ${source} to fail`);
}

describe('references', () => {
  it.each([
    ['approved', true],
    ['${count}', 7],
    ['${nothing}', null],
    ['user.name', 'alice'],
    ['user["full name"]', 'Alice A.'],
    ['tags[1]', 'b'],
    ['tags.length', 2],
    ['${step.q.output.num_rows}', 2],
    ['step.q.output.rows[0][1]', 'x'],
    ['step.q.output.rows[1][1]', null],
    ['step.q.output.rows[count - 6]', undefined],
    ['step.api.output.body.user.profile.email', 'a@example.com'],
    ['step.api.output.body["user"]["profile"].email', 'a@example.com'],
    ['step.q.output.columns[step.q.output.rows[0][0]]', 'v'],
    ['tags[tags.length == 2 && true]', undefined],
  ])('%s', (source, expected) => {
    if (expected === undefined) expect(() => run(source)).toThrow(ExprError);
    else expect(run(source)).toEqual(expected);
  });

  it('returns whole lists and objects', () => {
    expect(run('step.q.output.columns')).toEqual(['id', 'v']);
    expect(run('step.api.output.body.user')).toEqual({ profile: { email: 'a@example.com' } });
  });
});

describe('reference errors', () => {
  const cases: Array<[string, ExprErrorCode, number, RegExp]> = [
    ['${amount} > 1', 'unknown_input', 2, /no input named 'amount' \(inputs: approved, rejected/],
    ['step.nope.output.x == 1', 'unknown_step', 0, /no step named 'nope'/],
    ['step.skipped.output.x == 1', 'step_unavailable', 0, /step 'skipped' was skipped/],
    ['step.later.output.x == 1', 'step_unavailable', 0, /step 'later' has not run yet/],
    ['step.broken.output.x == 1', 'step_unavailable', 0, /step 'broken' failed/],
    ['step.approve.output.x == 1', 'step_unavailable', 0, /step 'approve' has no output/],
    ['user.email == 1', 'missing_property', 5, /no property 'email' \(properties: name, full name\)/],
    ['user["email"] == 1', 'missing_property', 4, /no property 'email'/],
    ['tags.first == 1', 'missing_property', 5, /a list has no property 'first'/],
    ['tags[2] == 1', 'invalid_index', 4, /index 2 is past the end of the list \(it has 2 items\)/],
    ['tags[-1] == 1', 'invalid_index', 4, /whole numbers from 0, not -1/],
    ['tags[0.5] == 1', 'invalid_index', 4, /whole numbers from 0, not 0.5/],
    ['tags[true] == 1', 'invalid_index', 4, /must be a number or a quoted name, not boolean true/],
    ['tags[null] == 1', 'invalid_index', 4, /not null/],
    ['user[0] == 1', 'invalid_index', 4, /named with quotes/],
    ['count.x == 1', 'not_indexable', 6, /cannot read 'x' of number 7/],
    ['name[0] == 1', 'not_indexable', 4, /cannot index text "alice"/],
    ['nothing.x == 1', 'not_indexable', 8, /cannot read 'x' of null/],
  ];
  it.each(cases)('%s: %s at %i', (source, code, position, message) => {
    const err = failure(source);
    expect(err.code).toBe(code);
    expect(err.position).toBe(position);
    expect(err.source).toBe(source);
    expect(err.message).toMatch(message);
  });

  it('a step missing from the context, or an unknown status, is an error naming the step', () => {
    const odd = { inputs: {}, steps: { s: { status: 'weird' } } } as unknown as EvalContext;
    expect(failure('step.s.output == 1', odd).message).toMatch(/step 's' has no usable state/);
    expect(failure('step.s.output == 1', { inputs: {}, steps: {} }).message).toMatch(/\(steps: none\)/);
  });
});

describe('prototype safety', () => {
  it.each([
    'user.constructor',
    'user.toString',
    'user.hasOwnProperty',
    'user["constructor"]',
    'tags.map',
    'tags["push"]',
    'name.length',
  ])('%s is not readable', (source) => {
    expect(() => run(source)).toThrow(ExprError);
  });

  it('__proto__ is refused even as a computed key', () => {
    const withKey = { inputs: { k: '__proto__', o: JSON.parse('{"__proto__": {"x": 1}}') }, steps: {} };
    const err = (() => {
      try {
        evaluate(parseExpression('o[k]'), withKey);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ExprError);
    expect((err as ExprError).code).toBe('forbidden_property');
  });

  it('a hand-built tree naming __proto__ is refused too', () => {
    const ast: Expr = {
      kind: 'member',
      object: { kind: 'input', name: 'user', pos: 0 },
      name: '__proto__',
      pos: 5,
    };
    expect(() => evaluate(ast, ctx)).toThrow(/'__proto__' cannot be read/);
  });

  it('own properties named like prototype members are ordinary data', () => {
    const data = { inputs: { o: { constructor: 'c', toString: 1 } }, steps: {} };
    expect(evaluate(parseExpression('o.constructor'), data)).toBe('c');
    expect(evaluate(parseExpression('o["toString"]'), data)).toBe(1);
  });

  it('inputs and steps are looked up as own properties only', () => {
    expect(failure('toString == 1').code).toBe('unknown_input');
    expect(failure('step.constructor.output == 1').code).toBe('unknown_step');
  });
});

describe('logical operators', () => {
  it.each([
    ['true && true', true],
    ['true && false', false],
    ['false && true', false],
    ['false || true', true],
    ['false || false', false],
    ['not true', false],
    ['!false', true],
    ['not not true', true],
    ['approved && !rejected', true],
  ])('%s is %s', (source, expected) => {
    expect(evaluateCondition(source, ctx)).toBe(expected);
  });

  it('short-circuits: the right side is not evaluated when the left decides', () => {
    expect(evaluateCondition('false && step.skipped.output.x', ctx)).toBe(false);
    expect(evaluateCondition('true || ${missing}', ctx)).toBe(true);
    expect(failure('true && step.skipped.output.x').code).toBe('step_unavailable');
  });

  it.each([
    ['count && true', 0, "'&&' needs true or false, but got number 7"],
    ['true && name', 8, '\'&&\' needs true or false, but got text "alice"'],
    ['nothing || true', 0, "'||' needs true or false, but got null"],
    ['not count', 4, "'not' needs true or false, but got number 7"],
    ['!tags', 1, "'not' needs true or false, but got a list of 2"],
  ])('%s is an error, not truthiness', (source, position, message) => {
    const err = failure(source);
    expect(err.code).toBe('not_boolean');
    expect(err.position).toBe(position);
    expect(err.reason).toBe(message);
  });
});

describe('comparisons', () => {
  it.each([
    // numbers
    ['count == 7', true],
    ['count != 7', false],
    ['count > 5', true],
    ['count >= 7', true],
    ['count < 7', false],
    ['count <= 6.5', false],
    ['ratio == 0.5', true],
    ['-1 < 0', true],
    // text
    ['name == "alice"', true],
    ['name != "Alice"', true],
    ['"abc" < "abd"', true],
    ['"B" < "a"', true],
    ['"2024-01-10" > "2024-01-09"', true],
    ['"\uffff" < "\u{1F600}"', true],
    // numeric text orders as numbers
    ['"10" > "9"', true],
    ['10 > 9', true],
    ['ten > "9"', true],
    ['"-5" < "-4.5"', true],
    ['"0.50" == "0.5"', false],
    ['"0.50" >= "0.5" && "0.50" <= "0.5"', true],
    ['"007" < "10"', true],
    ['big > "9007199254740992"', true],
    ['"1e3" > "999"', true],
    ['"1e999" >= "1e999"', true],
    // a number and numeric text compare as numbers
    ['ten == 10', true],
    ['10 == ten', true],
    ['ten != 10.0', false],
    ['ten > 9.5', true],
    ['step.q.output.rows[1][0] > 40', true],
    ['"1.5e1" == 15', true],
    // booleans and null
    ['approved == true', true],
    ['approved != false', true],
    ['nothing == null', true],
    ['count == null', false],
    ['null != name', true],
    ['step.q.output.rows[1][1] == null', true],
    // lists and objects compare structurally
    ['tags == step.q.output.columns', false],
    ['step.q.output.rows[0] == step.q.output.rows[0]', true],
    ['user == user', true],
    ['step.api.output.body.items == step.q.output.messages', true],
  ])('%s is %s', (source, expected) => {
    expect(evaluateCondition(source, ctx)).toBe(expected);
  });

  it.each([
    ['count == "abc"', 6, /cannot compare number 7 with text "abc" using '=='.*number in digits/],
    ['"7 " == count', 5, /cannot compare text "7 " with number 7/],
    ['"" == 0', 3, /text ""/],
    ['"0x10" == 16', 7, /text "0x10"/],
    ['approved == "true"', 9, /cannot compare boolean true with text "true"/],
    ['approved == 1', 9, /boolean true with number 1.*never equal by conversion/],
    ['tags == "a,b"', 5, /a list of 2 with text "a,b"/],
    ['tags == 1', 5, /a list of 2 with number 1/],
    ['user == tags', 5, /an object with a list of 2/],
    ['count > "abc"', 6, /using '>'/],
    ['approved > false', 9, /'>' orders numbers and text only/],
    ['nothing < 1', 8, /cannot compare null with number 1 using '<'/],
    ['tags >= tags', 5, /'>=' orders numbers and text only/],
    ['user <= user', 5, /an object/],
  ])('%s is a type_mismatch', (source, position, message) => {
    const err = failure(source);
    expect(err.code).toBe('type_mismatch');
    expect(err.position).toBe(position);
    expect(err.message).toMatch(message);
  });

  it('values that are not JSON are refused where they are read', () => {
    const odd = {
      inputs: {
        u: undefined,
        f: () => 1,
        b: 10n,
        n: Number.NaN,
        i: Number.POSITIVE_INFINITY,
        list: [undefined],
      },
      steps: {},
    };
    for (const name of ['u', 'f', 'b', 'n', 'i']) {
      expect(() => evaluate(parseExpression(`${name} == 1`), odd)).toThrow(/which expressions cannot use/);
    }
    expect(() => evaluate(parseExpression('list[0]'), odd)).toThrow(/item 0 is undefined/);
  });

  it('deeply nested or cyclic values are an error, not a stack overflow', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const c = { inputs: { a: cyclic, b: { self: { self: {} } } }, steps: {} };
    expect(() => evaluate(parseExpression('a == a'), c)).not.toThrow();
    const other: Record<string, unknown> = {};
    other.self = other;
    const err = (() => {
      try {
        evaluate(parseExpression('a == o'), { inputs: { a: cyclic, o: other }, steps: {} });
      } catch (e) {
        return e;
      }
    })();
    expect((err as ExprError).code).toBe('too_deep');
  });
});

describe('evaluateCondition', () => {
  it('accepts ${x} > 3 and x > 3 alike, as source or parsed', () => {
    expect(evaluateCondition('${count} > 3', ctx)).toBe(true);
    expect(evaluateCondition('count > 3', ctx)).toBe(true);
    expect(evaluateCondition(parseExpression('${step.q.output.num_rows} > 5 && ${approved}'), ctx)).toBe(
      false,
    );
  });

  it('a result that is not a boolean is an error, not truthiness', () => {
    for (const source of ['count', '${name}', 'nothing', 'tags', '"true"', '1']) {
      const err = failure(source);
      expect(err.code).toBe('not_boolean');
      expect(err.message).toMatch(/a condition must be true or false/);
    }
  });

  it('syntax errors surface with their position', () => {
    const err = failure('count >');
    expect(err.code).toBe('syntax');
    expect(err.position).toBe(7);
  });

  it('a parsed tree without its source still fails with ExprError', () => {
    const ast: Expr = { kind: 'input', name: 'missing', pos: 3 };
    expect(() => evaluate(ast, ctx)).toThrow(ExprError);
  });
});
