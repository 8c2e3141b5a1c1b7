// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are template source.
import { describe, expect, it } from 'vitest';
import { ExprError } from './errors.ts';
import type { EvalContext } from './evaluate.ts';
import { parseExpression } from './parser.ts';
import { collectReferences, parseTemplate, renderText } from './template.ts';

const ctx: EvalContext = {
  inputs: {
    name: 'Ada',
    count: 3,
    ratio: 0.25,
    ok: true,
    none: null,
    tags: ['x', 'y'],
    obj: { a: 1, b: 'two' },
  },
  steps: {
    q: { status: 'succeeded', output: { num_rows: 2, rows: [[1, 'first']] } },
    chat: { status: 'succeeded', output: { channel: 'C1', timestamp: '1700000000.0001' } },
    skipped: { status: 'skipped' },
  },
};

describe('parseTemplate', () => {
  it('splits text and ${} parts with their positions', () => {
    const t = parseTemplate('Hi ${name}, you have ${count} rows');
    expect(t.parts.map((p) => [p.kind, p.pos, p.kind === 'text' ? p.text : p.end])).toEqual([
      ['text', 0, 'Hi '],
      ['expr', 3, 10],
      ['text', 10, ', you have '],
      ['expr', 21, 29],
      ['text', 29, ' rows'],
    ]);
  });

  it('accepts whole expressions inside ${}', () => {
    const t = parseTemplate('${count > 2 && ok}');
    expect(t.parts).toHaveLength(1);
    expect(t.parts[0]?.kind === 'expr' && t.parts[0].expr.kind).toBe('logical');
  });

  it('$${ is the literal text ${; a lone $ is text', () => {
    const t = parseTemplate('cost $5, literal $${name} and ${name}');
    expect(t.parts[0]).toMatchObject({ kind: 'text', text: 'cost $5, literal ${name} and ' });
    expect(renderText(t, ctx)).toBe('cost $5, literal ${name} and Ada');
  });

  it('text without ${} is one part; an empty template has none', () => {
    expect(parseTemplate('plain').parts).toEqual([{ kind: 'text', text: 'plain', pos: 0 }]);
    expect(parseTemplate('').parts).toEqual([]);
  });

  it('a } inside a quoted string in ${} does not close it', () => {
    const t = parseTemplate('${obj["}"] == 1}');
    expect(t.parts).toHaveLength(1);
  });

  it.each([
    ['Hello ${name', 6, /this \$\{ has no closing }/],
    ['Hello ${}', 8, /expected a value or a reference, found '}'/],
    ['Hello ${name!}', 12, /expected '}'/],
    ['A ${a} and ${b c}', 15, /expected '}'/],
    ['x ${"unterminated}', 4, /no closing "/],
  ])('%j fails at %i', (source, position, message) => {
    try {
      parseTemplate(source);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ExprError);
      expect((err as ExprError).code).toBe('syntax');
      expect((err as ExprError).position).toBe(position);
      expect((err as ExprError).source).toBe(source);
      expect((err as ExprError).message).toMatch(message);
    }
  });
});

describe('renderText (chat messages)', () => {
  it.each([
    ['Hello ${name}!', 'Hello Ada!'],
    ['${count} rows', '3 rows'],
    ['ratio ${ratio}', 'ratio 0.25'],
    ['ok=${ok}', 'ok=true'],
    ['none=${none}', 'none=null'],
    ['tags=${tags}', 'tags=["x","y"]'],
    ['obj=${obj}', 'obj={"a":1,"b":"two"}'],
    ['${step.q.output.num_rows} rows, first: ${step.q.output.rows[0][1]}', '2 rows, first: first'],
    ['thread ${step.chat.output.timestamp}', 'thread 1700000000.0001'],
    ['big: ${count > 2}', 'big: true'],
    ['${name}${name}', 'AdaAda'],
    ['no refs', 'no refs'],
  ])('%s -> %s', (source, expected) => {
    expect(renderText(source, ctx)).toBe(expected);
  });

  it('renders a parsed template again with another context', () => {
    const t = parseTemplate('n=${count}');
    expect(renderText(t, ctx)).toBe('n=3');
    expect(renderText(t, { ...ctx, inputs: { count: 4 } })).toBe('n=4');
  });

  it('an error points into the template', () => {
    try {
      renderText('Rows: ${step.skipped.output.num_rows}', ctx);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ExprError);
      expect((err as ExprError).code).toBe('step_unavailable');
      expect((err as ExprError).position).toBe(8);
      expect((err as ExprError).message).toBe(
        "step 'skipped' was skipped (its condition was false), so it has no output (column 9)",
      );
    }
  });

  it('a value with no text form is an error', () => {
    expect(() => renderText('${u}', { inputs: { u: undefined }, steps: {} })).toThrow(ExprError);
    expect(() => renderText('${o}', { inputs: { o: { f: () => 1 } }, steps: {} })).toThrow(
      /has no JSON form/,
    );
  });
});

describe('collectReferences', () => {
  it('lists inputs and steps of a template once each, in order, with every position', () => {
    const refs = collectReferences(
      'SELECT ${a}, ${step.q.output.rows[0][0]}, ${b} WHERE ${a} = ${step.api.output.body[key]}',
      'template',
    );
    expect(refs.inputs).toEqual(['a', 'b', 'key']);
    expect(refs.steps).toEqual(['q', 'api']);
    expect(refs.references).toEqual([
      { kind: 'input', name: 'a', position: 9 },
      { kind: 'step', name: 'q', position: 15 },
      { kind: 'input', name: 'b', position: 44 },
      { kind: 'input', name: 'a', position: 55 },
      { kind: 'step', name: 'api', position: 62 },
      { kind: 'input', name: 'key', position: 83 },
    ]);
  });

  it('an expression source counts bare names; a template source does not', () => {
    expect(collectReferences('x > 3 && ${y}', 'expression').inputs).toEqual(['x', 'y']);
    expect(collectReferences('x > 3 && ${y}', 'template').inputs).toEqual(['y']);
  });

  it('accepts parsed expressions and templates, and walks every operator', () => {
    const e = parseExpression('not (a == step.s.output.x) || b[c] && d.e');
    expect(collectReferences(e)).toMatchObject({ inputs: ['a', 'b', 'c', 'd'], steps: ['s'] });
    expect(collectReferences(parseTemplate('${z}'))).toMatchObject({ inputs: ['z'], steps: [] });
  });

  it('literals and escaped ${ are no references', () => {
    expect(collectReferences('$${a} ${"b"} ${1}', 'template')).toEqual({
      inputs: [],
      steps: [],
      references: [],
    });
  });

  it('syntax errors surface as ExprError', () => {
    expect(() => collectReferences('${a', 'template')).toThrow(ExprError);
    expect(() => collectReferences('a ==', 'expression')).toThrow(ExprError);
  });
});
