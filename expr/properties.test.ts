// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CompareOp, type Expr, RESERVED_WORDS } from './ast.ts';
import { ExprError } from './errors.ts';
import { type EvalContext, evaluate, evaluateCondition } from './evaluate.ts';
import { renderJson } from './json.ts';
import { parseExpression } from './parser.ts';
import { printExpression } from './print.ts';
import { renderSql, SQL_STYLES } from './sql.ts';
import { collectReferences, parseTemplate, renderText } from './template.ts';
import { toText } from './values.ts';

/** The tree without positions and source. */
function shape(e: Expr): unknown {
  return JSON.parse(JSON.stringify(e, (k, v) => (k === 'pos' || k === 'source' ? undefined : v)));
}

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/).filter((n) => n !== '__proto__');
const inputName = name.filter((n) => !RESERVED_WORDS.has(n));
const number = fc.double({ noNaN: true, noDefaultInfinity: true });
const anyText = fc.string({ unit: 'binary', maxLength: 12 });
const literal = fc.oneof(number, anyText, fc.boolean(), fc.constant(null));

/** Every tree the parser can produce (positions zeroed). */
const exprArb: fc.Arbitrary<Expr> = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    literal.map((value): Expr => ({ kind: 'literal', value, pos: 0 })),
    inputName.map((n): Expr => ({ kind: 'input', name: n, pos: 0 })),
    anyText.map((n): Expr => ({ kind: 'step', name: n, pos: 0 })),
    fc.record({ object: tie('expr'), name }).map((r): Expr => ({ kind: 'member', ...r, pos: 0 })),
    fc
      .record({ object: tie('expr'), index: tie('expr') })
      .filter((r) => !(r.index.kind === 'literal' && r.index.value === '__proto__'))
      .map((r): Expr => ({ kind: 'index', ...r, pos: 0 })),
    tie('expr').map((operand): Expr => ({ kind: 'not', operand, pos: 0 })),
    fc
      .record({
        op: fc.constantFrom<CompareOp>('==', '!=', '<', '<=', '>', '>='),
        left: tie('expr'),
        right: tie('expr'),
      })
      .map((r): Expr => ({ kind: 'compare', ...r, pos: 0 })),
    fc
      .record({ op: fc.constantFrom('&&' as const, '||' as const), left: tie('expr'), right: tie('expr') })
      .map((r): Expr => ({ kind: 'logical', ...r, pos: 0 })),
  ),
})).expr;

/** Source text made of the language's tokens and a few troublemakers. */
const TOKENS = [
  '${',
  '}',
  'a',
  'b',
  'x',
  'step',
  '.',
  'q',
  'output',
  'rows',
  'num_rows',
  '[',
  ']',
  '0',
  '1',
  '-2.5',
  '1e3',
  '"x"',
  "'y'",
  '"10"',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
  '!',
  'not',
  '(',
  ')',
  ' ',
  'true',
  'false',
  'null',
  '"',
  "'",
  '\\',
  '$',
  '$${',
  '--',
  '/*',
  '*/',
  '`',
  '{',
  ':',
  '?',
  '@p1',
  '$1',
  '#',
  '\n',
  '__proto__',
  'constructor',
  'length',
  '=',
  '&',
  'and',
];
const sourceArb = fc.oneof(
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 24 }).map((t) => t.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const value = fc.anything({ maxDepth: 3 });
const contextArb: fc.Arbitrary<EvalContext> = fc.record({
  inputs: fc.dictionary(fc.constantFrom('a', 'b', 'x', 'rows', 'constructor'), value),
  steps: fc.dictionary(
    fc.constantFrom('q', 'r', 'toString'),
    fc.oneof(
      fc.record({
        status: fc.constantFrom(
          'succeeded' as const,
          'skipped' as const,
          'failed' as const,
          'pending' as const,
        ),
        output: fc.oneof(
          value,
          fc.record({
            num_rows: fc.integer(),
            rows: fc.array(fc.array(value, { maxLength: 3 }), { maxLength: 3 }),
          }),
        ),
      }),
      value as fc.Arbitrary<never>,
    ),
  ),
});

/** Runs `fn`; any exception other than ExprError fails the property. */
function onlyExprError(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ExprError)) throw err;
    expect(err.position).toBeGreaterThanOrEqual(0);
  }
}

describe('properties', () => {
  it('parse(print(ast)) gives back the tree', () => {
    fc.assert(
      fc.property(exprArb, (ast) => {
        const printed = printExpression(ast);
        expect(shape(parseExpression(printed))).toEqual(shape(ast));
        expect(printExpression(parseExpression(printed))).toBe(printed);
      }),
      { numRuns: 2000 },
    );
  });

  it('evaluation throws nothing but ExprError, on random trees and random contexts', () => {
    fc.assert(
      fc.property(exprArb, contextArb, (ast, ctx) => {
        onlyExprError(() => evaluate(ast, ctx));
        onlyExprError(() => evaluateCondition(ast, ctx));
      }),
      { numRuns: 2000 },
    );
  });

  it('parsing, evaluating and rendering random source throw nothing but ExprError', () => {
    fc.assert(
      fc.property(sourceArb, contextArb, (source, ctx) => {
        onlyExprError(() => evaluateCondition(source, ctx));
        onlyExprError(() => collectReferences(source, 'expression'));
        onlyExprError(() => collectReferences(source, 'template'));
        onlyExprError(() => renderText(source, ctx));
        onlyExprError(() => renderJson(source, ctx));
        for (const style of SQL_STYLES) onlyExprError(() => renderSql(source, ctx, style));
      }),
      { numRuns: 2000 },
    );
  });

  it('no input value ever appears in SQL text, only in the parameters', () => {
    // The template text never contains the marker §; every value does. So a § in the rendered text
    // could only have come from a value.
    const fragment = fc.constantFrom(
      'SELECT ',
      '* ',
      'FROM t ',
      'WHERE ',
      'a = ',
      ' AND ',
      ', ',
      '(',
      ')',
      "'s'",
      '"id"',
      '`id`',
      '[id]',
      "'",
      '"',
      '`',
      '[',
      ']',
      '-- c\n',
      '--',
      '/* c */',
      '/*',
      '*/',
      '#',
      '\n',
      '$$',
      '$t$',
      'E',
      'q',
      '\\',
      '{',
      ':',
      ' ',
      'x',
      '1',
    );
    const part = fc.oneof(
      fragment,
      fc.integer({ min: 0, max: 3 }).map((i) => ({ ref: i })),
    );
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 20 }),
        fc.array(fc.tuple(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })), {
          minLength: 4,
          maxLength: 4,
        }),
        fc.constantFrom(...SQL_STYLES),
        (parts, pairs, style) => {
          const values = pairs.map(([before, after]) => `${before}§${after}`);
          const ctx: EvalContext = {
            inputs: { v0: values[0], v1: values[1], v2: values[2], v3: values[3] },
            steps: {},
          };
          const source = parts.map((p) => (typeof p === 'string' ? p : `\${v${p.ref}}`)).join('');
          let out: ReturnType<typeof renderSql>;
          try {
            out = renderSql(source, ctx, style);
          } catch (err) {
            if (err instanceof ExprError) return; // refused (a ${} in quotes, a raw placeholder): nothing spliced
            throw err;
          }
          expect(out.text).not.toContain('§');
          // Expected values in order, read from the parsed template (a fragment ending in `$` before
          // a `${` makes the escape `$${`, which is text).
          const refs = parseTemplate(source).parts.flatMap((p) =>
            p.kind === 'expr' && p.expr.kind === 'input' ? [ctx.inputs[p.expr.name]] : [],
          );
          expect(out.params).toEqual(refs);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('SQL templates of code-only text always bind', () => {
    const code = fc.constantFrom(
      'SELECT ',
      'a = ',
      ' AND ',
      ', ',
      '(',
      ')',
      ' ',
      'x',
      '1',
      "'s'",
      '"id"',
      '/* c */',
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(code, fc.constant(null)), { maxLength: 12 }),
        fc.constantFrom(...SQL_STYLES),
        (parts, style) => {
          const source = parts.map((p) => p ?? '${v}').join('');
          const out = renderSql(source, { inputs: { v: 'val§' }, steps: {} }, style);
          expect(out.params).toHaveLength(parts.filter((p) => p === null).length);
          expect(out.text).not.toContain('§');
        },
      ),
    );
  });

  it('a value in a JSON string never breaks out of it', () => {
    const plain = (s: string) => ![...s].some((c) => c === '"' || c === '\\' || c < ' ');
    const jsonSafe = fc
      .string({ maxLength: 8 })
      .filter((s) => plain(s) && !s.includes('${') && !s.endsWith('$'));
    fc.assert(
      fc.property(jsonSafe, jsonSafe, value, (prefix, suffix, v) => {
        let expected: string;
        try {
          expected = `${prefix}${toText(v, 0)}${suffix}`;
        } catch {
          return; // a value with no text form is refused by renderJson too
        }
        const out = renderJson(`{"k": "${prefix}\${v}${suffix}", "after": 1}`, { inputs: { v }, steps: {} });
        if (prefix === '' && suffix === '')
          expect(out).toEqual({ k: JSON.parse(JSON.stringify(v)), after: 1 });
        else expect(out).toEqual({ k: expected, after: 1 });
      }),
    );
  });

  it('parseTemplate keeps text and $${ escapes intact', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const escaped = text.replaceAll('${', '$${');
        const source = escaped.endsWith('$') ? `${escaped} ` : escaped;
        const t = parseTemplate(source);
        expect(t.parts.every((p) => p.kind === 'text')).toBe(true);
        expect(renderText(t, { inputs: {}, steps: {} })).toBe(source.replaceAll('$${', '${'));
      }),
    );
  });
});
