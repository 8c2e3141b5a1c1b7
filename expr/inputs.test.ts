import { describe, expect, it } from 'vitest';
import { InputError } from './errors.ts';
import { type InputType, parseInputs, parseInputValue } from './inputs.ts';

const fromJson = (type: InputType, raw: unknown) => parseInputValue(type, raw, { fromText: false });
const fromText = (type: InputType, raw: string) => parseInputValue(type, raw, { fromText: true });

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('inputs from JSON values (API trigger, manual run)', () => {
  it.each([
    ['string', 'hello', 'hello'],
    ['string', '', ''],
    ['integer', 42, 42],
    ['integer', -7, -7],
    ['integer', 1e3, 1000],
    ['integer', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ['integer', -0, 0],
    ['float', 1.5, 1.5],
    ['float', 3, 3],
    ['boolean', true, true],
    ['boolean', false, false],
  ] as const)('%s %j', (type, raw, expected) => {
    expect(Object.is(fromJson(type, raw), expected)).toBe(true);
  });

  it.each([
    ['string', 42, /must be text \(a JSON string\), but got number 42/],
    ['string', null, /but got null/],
    ['integer', '42', /must be a whole number such as 42, but got text "42"/],
    ['integer', 4.5, /whole number/],
    ['integer', 2 ** 53, /between -9007199254740991 and 9007199254740991/],
    ['integer', Number.NaN, /whole number/],
    ['float', '1.5', /must be a number such as 1.5/],
    ['float', Number.POSITIVE_INFINITY, /must be a number/],
    ['boolean', 'true', /must be true or false, but got text "true"/],
    ['boolean', 1, /true or false/],
    ['boolean', undefined, /got undefined/],
  ] as const)('%s %j is refused', (type, raw, message) => {
    const err = inputError(() => fromJson(type, raw));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(message);
  });
});

describe('inputs from text (tracker trigger)', () => {
  it.each([
    ['string', '  kept as written ', '  kept as written '],
    ['integer', '42', 42],
    ['integer', ' -17 ', -17],
    ['integer', '+5', 5],
    ['integer', '007', 7],
    ['integer', '-0', 0],
    ['integer', '9007199254740991', 9007199254740991],
    ['float', '1.5', 1.5],
    ['float', '-2', -2],
    ['float', '.5', 0.5],
    ['float', '2.', 2],
    ['float', '1e3', 1000],
    ['float', '6.02E23', 6.02e23],
    ['boolean', 'true', true],
    ['boolean', 'FALSE', false],
    ['boolean', ' Yes ', true],
    ['boolean', 'no', false],
    ['boolean', '1', true],
    ['boolean', '0', false],
  ] as const)('%s %j', (type, raw, expected) => {
    expect(Object.is(fromText(type, raw), expected)).toBe(true);
  });

  it.each([
    ['integer', '', /whole number such as 42, but got text ""/],
    ['integer', '4.0', /whole number/],
    ['integer', '1e3', /whole number/],
    ['integer', '0x10', /whole number/],
    ['integer', '1_000', /whole number/],
    ['integer', '9007199254740992', /between/],
    ['float', '1,5', /with a dot for decimals/],
    ['float', 'NaN', /a number such as 1.5/],
    ['float', 'Infinity', /a number such as 1.5/],
    ['float', '1e999', /within the range of a float/],
    ['float', '', /a number/],
    ['boolean', 'on', /true or false \(or yes\/no, 1\/0\)/],
    ['boolean', 'y', /true or false/],
    ['boolean', '', /true or false/],
  ] as const)('%s %j is refused', (type, raw, message) => {
    expect(() => fromText(type, raw)).toThrow(message);
  });

  it('text mode needs text', () => {
    expect(() => parseInputValue('integer', 5, { fromText: true })).toThrow(/must be text to be read/);
  });

  it('names the input when told its key', () => {
    const err = inputError(() => parseInputValue('integer', 'x', { fromText: true, name: 'limit' }));
    expect(err.message).toBe(`input 'limit' must be a whole number such as 42, but got text "x"`);
    expect(err.input).toBe('limit');
  });
});

describe('parseInputs', () => {
  const defs = [
    { key: 'limit', type: 'integer' },
    { key: 'dry_run', type: 'boolean' },
  ] as const;

  it('checks every defined input and returns typed values', () => {
    expect(parseInputs(defs, { limit: '10', dry_run: 'yes' }, { fromText: true })).toEqual({
      limit: 10,
      dry_run: true,
    });
    expect(parseInputs(defs, { limit: 10, dry_run: false }, { fromText: false })).toEqual({
      limit: 10,
      dry_run: false,
    });
  });

  it('refuses a missing input, an unknown input and a wrong type', () => {
    expect(inputError(() => parseInputs(defs, { limit: 1 }, { fromText: false })).message).toBe(
      "input 'dry_run' is required (a boolean)",
    );
    expect(
      inputError(() => parseInputs(defs, { limit: 1, dry_run: true, x: 1 }, { fromText: false })).message,
    ).toBe("there is no input named 'x' (inputs: limit, dry_run)");
    expect(
      inputError(() => parseInputs(defs, { limit: 1.5, dry_run: true }, { fromText: false })).input,
    ).toBe('limit');
  });

  it('an input called __proto__ stays an own property', () => {
    const out = parseInputs([{ key: '__proto__', type: 'string' }], JSON.parse('{"__proto__": "x"}'), {
      fromText: false,
    });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
