// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { describe, expect, it } from 'vitest';
import type { Expr } from './ast.ts';
import { ExprError } from './errors.ts';
import { MAX_NESTING, parseExpression } from './parser.ts';
import { printExpression } from './print.ts';

/** The tree without positions and source, for comparing shapes. */
function shape(e: Expr): unknown {
  return JSON.parse(JSON.stringify(e, (k, v) => (k === 'pos' || k === 'source' ? undefined : v)));
}

function syntaxError(source: string): ExprError {
  try {
    parseExpression(source);
  } catch (err) {
    if (err instanceof ExprError) return err;
    throw err;
  }
  throw new Error(`expected ${source} not to parse`);
}

const lit = (value: string | number | boolean | null) => ({ kind: 'literal', value });
const input = (name: string) => ({ kind: 'input', name });

describe('literals', () => {
  it.each([
    ['42', 42],
    ['-7', -7],
    ['3.25', 3.25],
    ['1e3', 1000],
    ['-2.5E-2', -0.025],
    ['007', 7],
    ['"double"', 'double'],
    ["'single'", 'single'],
    ['"it\'s"', "it's"],
    ['\'say "hi"\'', 'say "hi"'],
    ['"a\\nb\\t\\\\\\u00e9\\$"', 'a\nb\t\\é$'],
    ['""', ''],
    ['true', true],
    ['false', false],
    ['null', null],
  ])('%s', (source, value) => {
    expect(shape(parseExpression(source))).toEqual(lit(value));
  });
});

describe('references', () => {
  it('a bare name and ${name} are the same input', () => {
    expect(shape(parseExpression('amount'))).toEqual(input('amount'));
    expect(shape(parseExpression('${amount}'))).toEqual(input('amount'));
    expect(shape(parseExpression('${ amount }'))).toEqual(input('amount'));
  });

  it('step.<name>.output with member access and indexing', () => {
    expect(shape(parseExpression('${step.q.output.rows[0][1]}'))).toEqual({
      kind: 'index',
      object: {
        kind: 'index',
        object: { kind: 'member', object: { kind: 'step', name: 'q' }, name: 'rows' },
        index: lit(0),
      },
      index: lit(1),
    });
  });

  it('nested members, quoted keys and computed indexes', () => {
    expect(shape(parseExpression('step.api.output.body.user.profile["e-mail address"]'))).toEqual({
      kind: 'index',
      object: {
        kind: 'member',
        object: {
          kind: 'member',
          object: { kind: 'member', object: { kind: 'step', name: 'api' }, name: 'body' },
          name: 'user',
        },
        name: 'profile',
      },
      index: lit('e-mail address'),
    });
    expect(shape(parseExpression('rows[i]'))).toEqual({
      kind: 'index',
      object: input('rows'),
      index: input('i'),
    });
  });

  it('step names that are not identifiers are quoted', () => {
    expect(shape(parseExpression('step["Run query"].output.num_rows'))).toEqual({
      kind: 'member',
      object: { kind: 'step', name: 'Run query' },
      name: 'num_rows',
    });
  });

  it('keywords may be property names after a dot', () => {
    expect(shape(parseExpression('x.null.not.step'))).toEqual({
      kind: 'member',
      object: { kind: 'member', object: { kind: 'member', object: input('x'), name: 'null' }, name: 'not' },
      name: 'step',
    });
  });

  it('records where each reference starts', () => {
    const e = parseExpression('${a} == step.q.output');
    expect(e.kind === 'compare' && [e.left.pos, e.right.pos, e.pos]).toEqual([2, 8, 5]);
  });
});

describe('precedence', () => {
  const cases: Array<[string, string]> = [
    ['a || b && c', 'a || b && c'],
    ['(a || b) && c', '(a || b) && c'],
    ['a && b || c && d', 'a && b || c && d'],
    ['a || b || c', 'a || b || c'],
    ['a || (b || c)', 'a || (b || c)'],
    ['not a && b', 'not a && b'],
    ['not (a && b)', 'not (a && b)'],
    ['!a == b', 'not a == b'],
    ['not a == b', 'not a == b'],
    ['(not a) == b', '(not a) == b'],
    ['!!a', 'not not a'],
    ['a > 1 && b <= 2 || c != "x"', 'a > 1 && b <= 2 || c != "x"'],
    ['(a == b) == c', '(a == b) == c'],
    ['((a))', 'a'],
    ['${a} >= ${b}', 'a >= b'],
    ['(x).y[0]', 'x.y[0]'],
    ['(a && b).c', '(a && b).c'],
  ];
  it.each(cases)('%s prints as %s', (source, printed) => {
    expect(printExpression(parseExpression(source))).toBe(printed);
  });

  it('|| is loosest, then &&, then not, then comparisons', () => {
    expect(shape(parseExpression('not a == 1 && b || c'))).toEqual({
      kind: 'logical',
      op: '||',
      left: {
        kind: 'logical',
        op: '&&',
        left: { kind: 'not', operand: { kind: 'compare', op: '==', left: input('a'), right: lit(1) } },
        right: input('b'),
      },
      right: input('c'),
    });
  });

  it('&& and || associate to the left', () => {
    const e = parseExpression('a && b && c');
    expect(e.kind === 'logical' && e.left.kind).toBe('logical');
  });

  it.each(['==', '!=', '<', '<=', '>', '>='])('parses %s', (op) => {
    expect(shape(parseExpression(`a ${op} 1`))).toEqual({
      kind: 'compare',
      op,
      left: input('a'),
      right: lit(1),
    });
  });
});

describe('syntax errors', () => {
  const cases: Array<[string, number, RegExp]> = [
    ['', 0, /expected a value or a reference, found end of input/],
    ['a ==', 4, /expected a value or a reference/],
    ['a = 1', 2, /use '==' to compare/],
    ['a & b', 2, /use '&&'/],
    ['a | b', 2, /use '\|\|'/],
    ['a and b', 2, /use '&&' instead of 'and'/],
    ['a or b', 2, /use '\|\|' instead of 'or'/],
    ['1 < 2 < 3', 6, /comparisons do not chain/],
    ['a == not b', 5, /wrap it in parentheses/],
    ['(a', 2, /expected '\)' to close the '\('/],
    ['${a', 3, /expected '}' to close the \$\{/],
    ['a b', 2, /unexpected name 'b' after the end of the expression/],
    ['a.', 2, /expected a property name after "."/],
    ['a[0', 3, /expected '\]' to close the index/],
    ['"abc', 0, /no closing "/],
    ["'abc", 0, /no closing '/],
    ['"\\q"', 1, /unknown escape \\q/],
    ['"\\u12"', 1, /four hex digits/],
    ['"${x}" == 1', 1, /not expanded inside a quoted string/],
    ['1e', 1, /exponent needs digits/],
    ['12abc', 0, /neither a number nor a name/],
    ['1e999', 0, /too large/],
    ['a - b', 2, /no arithmetic/],
    ['a # b', 2, /unexpected character "#"/],
    ['$a', 0, /only as \$\{\.\.\.\}/],
    ['{a}', 0, /only valid in \$\{\.\.\.\}/],
    ['step', 4, /step\.<name>\.output/],
    ['step.q', 6, /'\.output' after the step name/],
    ['step.q.rows', 7, /expected 'output'/],
    ['step[1].output', 5, /a quoted step name/],
  ];
  it.each(cases)('%j fails at %i', (source, position, message) => {
    const err = syntaxError(source);
    expect(err.code).toBe('syntax');
    expect(err.position).toBe(position);
    expect(err.source).toBe(source);
    expect(err.message).toMatch(message);
  });

  it('__proto__ cannot be named, with a dot or a quoted index', () => {
    for (const source of ['a.__proto__', 'a["__proto__"]', '${a.__proto__.x}']) {
      expect(syntaxError(source).code).toBe('forbidden_property');
    }
  });

  it(`nesting is limited to ${MAX_NESTING} levels`, () => {
    expect(() => parseExpression(`${'('.repeat(MAX_NESTING)}a${')'.repeat(MAX_NESTING)}`)).not.toThrow();
    const err = syntaxError(`${'('.repeat(MAX_NESTING + 1)}a${')'.repeat(MAX_NESTING + 1)}`);
    expect(err.code).toBe('too_deep');
    expect(syntaxError(`${'not '.repeat(MAX_NESTING + 1)}a`).code).toBe('too_deep');
    expect(syntaxError(`a${'[0'.repeat(MAX_NESTING + 1)}`).code).toBe('too_deep');
    // Well past any stack limit: still an ExprError, not a RangeError.
    expect(syntaxError('('.repeat(100_000)).code).toBe('too_deep');
  });
});

describe('printExpression', () => {
  it('prints strings with escapes and never an unescaped ${', () => {
    const e = parseExpression('x == "a\\"b\\n\\${c}"');
    expect(printExpression(e)).toBe('x == "a\\"b\\n\\${c}"');
    expect(shape(parseExpression(printExpression(e)))).toEqual(shape(e));
  });

  it('prints -0, exponents and quoted step names so they parse back', () => {
    for (const source of ['-0 == x', '1e+21 < x', '5e-7 > x', 'step["a b"].output.c', 'x["a b"][0].y']) {
      const e = parseExpression(source);
      expect(shape(parseExpression(printExpression(e)))).toEqual(shape(e));
    }
    expect(printExpression(parseExpression('-0'))).toBe('-0');
  });
});
