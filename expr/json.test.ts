// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are template source.
import { describe, expect, it } from 'vitest';
import { ExprError } from './errors.ts';
import type { EvalContext } from './evaluate.ts';
import { parseJson, renderJson } from './json.ts';
import { parseTemplate } from './template.ts';

const ctx: EvalContext = {
  inputs: {
    n: 5,
    f: 1.5,
    s: 'text',
    quote: 'say "hi"\\ \n',
    yes: true,
    none: null,
    list: [1, 'a', null],
    obj: { k: [true] },
    breakout: '", "admin": true, "x": "',
  },
  steps: { api: { status: 'succeeded', output: { status_code: 201, body: { id: 'u_1', tags: ['a'] } } } },
};

function jsonError(source: string): ExprError {
  try {
    renderJson(source, ctx);
  } catch (err) {
    if (err instanceof ExprError) return err;
    throw err;
  }
  throw new Error(`expected ${source} to fail`);
}

describe('renderJson (API bodies)', () => {
  it('a ${} that is the whole of a string keeps its type', () => {
    expect(renderJson('{"n": "${n}", "f": "${f}", "b": "${yes}", "z": "${none}"}', ctx)).toEqual({
      n: 5,
      f: 1.5,
      b: true,
      z: null,
    });
    expect(renderJson('{"list": "${list}", "obj": "${obj}", "s": "${s}"}', ctx)).toEqual({
      list: [1, 'a', null],
      obj: { k: [true] },
      s: 'text',
    });
    expect(renderJson('["${step.api.output.body}"]', ctx)).toEqual([{ id: 'u_1', tags: ['a'] }]);
  });

  it('a ${} inside a longer string is rendered as text and escaped', () => {
    expect(renderJson('{"msg": "n=${n}, s=${s}, list=${list}"}', ctx)).toEqual({
      msg: 'n=5, s=text, list=[1,"a",null]',
    });
    expect(renderJson('{"msg": " ${n}"}', ctx)).toEqual({ msg: ' 5' });
    expect(renderJson('{"msg": "${n}${n}"}', ctx)).toEqual({ msg: '55' });
    expect(renderJson('{"msg": "${quote}!"}', ctx)).toEqual({ msg: 'say "hi"\\ \n!' });
    expect(renderJson('{"msg": "\\"${s}\\""}', ctx)).toEqual({ msg: '"text"' });
  });

  it('a ${} outside strings is the value as JSON', () => {
    expect(renderJson('{"n": ${n}, "list": ${list}, "id": ${step.api.output.body.id}}', ctx)).toEqual({
      n: 5,
      list: [1, 'a', null],
      id: 'u_1',
    });
    expect(renderJson('${obj}', ctx)).toEqual({ k: [true] });
    expect(renderJson('"${quote}"', ctx)).toBe('say "hi"\\ \n');
  });

  it('an object key is always text', () => {
    expect(renderJson('{"${n}": 1, "${s}" : 2, "k_${n}": 3}', ctx)).toEqual({ '5': 1, text: 2, k_5: 3 });
  });

  it('a value can never break out of its string or its place', () => {
    expect(renderJson('{"name": "${breakout}"}', ctx)).toEqual({ name: ctx.inputs.breakout });
    expect(renderJson('{"name": "user ${breakout}"}', ctx)).toEqual({ name: `user ${ctx.inputs.breakout}` });
    expect(renderJson('{"name": ${breakout}}', ctx)).toEqual({ name: ctx.inputs.breakout });
  });

  it('a __proto__ key is an own property, not the prototype', () => {
    const out = renderJson('{"__proto__": {"polluted": true}, "a": 1}', ctx) as Record<string, unknown>;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('renders a parsed template', () => {
    expect(renderJson(parseTemplate('{"n": "${n}"}'), ctx)).toEqual({ n: 5 });
  });

  it('$${ is literal text', () => {
    expect(renderJson('{"t": "$${n}"}', ctx)).toEqual({ t: '${n}' });
  });
});

describe('renderJson errors', () => {
  it.each([
    ['{"a": 1,}', 8, /expected a property name in double quotes/],
    ['{"a" 1}', 5, /expected ':' after the property name/],
    ['[1 2]', 3, /expected ',' or '\]' after a list item/],
    ['{"a": 1', 7, /expected ',' or '}' after a property value/],
    ['{"a": tru}', 6, /expected a JSON value, found "t"/],
    ['{"a": "x}', 6, /no closing quote/],
    ['{"a": 01}', 7, /expected ',' or '}'/],
    ['{"a": "\\x"}', 7, /invalid escape \\x/],
    ['{"a": "line\nbreak"}', 11, /control character/],
    ['', 0, /ends where a value should be/],
    ['{} {}', 3, /unexpected text after the end/],
    ['{"a": 1e999}', 6, /too large/],
  ])('%j is invalid at %i', (source, position, message) => {
    const err = jsonError(source);
    expect(err.code).toBe('invalid_json');
    expect(err.position).toBe(position);
    expect(err.message).toMatch(message);
  });

  it('positions after a ${} still point into the template', () => {
    const err = jsonError('{"a": "${s}", "b": ${n} "c": 1}');
    expect(err.position).toBe(24);
    const after = jsonError('{"a": "${s}" "b": 2}');
    expect(after.position).toBe(13);
    const escaped = jsonError('{"a": "$${x}", b}');
    expect(escaped.position).toBe(15);
  });

  it('two values side by side do not merge into one token', () => {
    const err = jsonError('{"n": ${n}${n}}');
    expect(err.position).toBe(10);
    expect(err.message).toMatch(/expected ',' or '}'/);
    expect(jsonError('{"n": "${n}""${n}"}').code).toBe('invalid_json');
  });

  it('a backslash right before a ${} inside a string is refused', () => {
    const err = jsonError('{"a": "C:\\${s}"}');
    expect(err.position).toBe(9);
    expect(err.message).toMatch(/backslash right before/);
    expect(renderJson('{"a": "C:\\\\${s}"}', ctx)).toEqual({ a: 'C:\\text' });
  });

  it('reference errors point at the ${}', () => {
    const err = jsonError('{"a": "${missing}"}');
    expect(err.code).toBe('unknown_input');
    expect(err.position).toBe(9);
  });

  it('values with no JSON form are refused, not dropped', () => {
    const odd = { inputs: { o: { u: undefined }, big: 10n }, steps: {} };
    expect(() => renderJson('{"a": "${o}"}', odd)).toThrow(/has no JSON form/);
    expect(() => renderJson('{"a": ${big}}', odd)).toThrow(ExprError);
  });
});

describe('parseJson', () => {
  it('parses what JSON.parse parses', () => {
    for (const text of [
      '0',
      '-1.5e+3',
      '"\\u00e9\\/\\b\\f\\n\\r\\t"',
      '[]',
      '{}',
      ' [ {"a" : [null, true, false]} ] ',
    ]) {
      expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  it('limits nesting', () => {
    expect(parseJson(`${'['.repeat(600)}${']'.repeat(600)}`)).toMatchObject({
      ok: false,
      reason: /nests more than/,
    });
  });
});
