import { InputError } from './errors.ts';
import { describe } from './values.ts';

/** SPEC.md 2.1 input definition `type`. */
export type InputType = 'string' | 'integer' | 'float' | 'boolean';

export const INPUT_TYPES: readonly InputType[] = ['string', 'integer', 'float', 'boolean'];

export interface ParseInputOptions {
  /** True when the value is text to be read (tracker issue descriptions); false for JSON values. */
  fromText: boolean;
  /** The input's key, for the error message. */
  name?: string;
}

const INTEGER_TEXT = /^[+-]?\d+$/;
const FLOAT_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE_TEXT = new Set(['true', 'yes', '1']);
const FALSE_TEXT = new Set(['false', 'no', '0']);

/**
 * Checks one workflow input value against its declared type (SPEC.md 2.1 "Input types").
 *
 * JSON values (API trigger, manual run) must already have the type: a string for `string`, a number
 * for `float`, a whole number for `integer`, true or false for `boolean`; no conversion.
 * Text (tracker trigger) is read: surrounding whitespace is ignored except for `string`, which is
 * kept as written; `integer` is digits with an optional sign; `float` is a decimal number with an
 * optional exponent (`1.5`, `-2`, `.5`, `1e3`); `boolean` is `true`/`false`, `yes`/`no` or `1`/`0`,
 * in any letter case. Integers must be safe integers (at most 2^53 - 1 in magnitude); floats finite.
 * Throws InputError (code `invalid_input`).
 */
export function parseInputValue(
  type: InputType,
  raw: unknown,
  options: ParseInputOptions,
): string | number | boolean {
  const label = options.name === undefined ? 'the input' : `input '${options.name}'`;
  const fail = (expected: string): never => {
    throw new InputError(`${label} must be ${expected}, but got ${describe(raw)}`, options.name);
  };
  if (options.fromText) {
    if (typeof raw !== 'string') return fail('text to be read');
    const text = raw.trim();
    switch (type) {
      case 'string':
        return raw;
      case 'integer': {
        if (!INTEGER_TEXT.test(text)) return fail('a whole number such as 42');
        const n = Number(text);
        if (!Number.isSafeInteger(n))
          return fail('a whole number between -9007199254740991 and 9007199254740991');
        return n === 0 ? 0 : n;
      }
      case 'float': {
        if (!FLOAT_TEXT.test(text)) {
          return fail(
            /^[+-]?\d+,\d+$/.test(text)
              ? 'a number with a dot for decimals, such as 1.5'
              : 'a number such as 1.5',
          );
        }
        const n = Number(text);
        if (!Number.isFinite(n)) return fail('a number within the range of a float');
        return n === 0 ? 0 : n;
      }
      case 'boolean': {
        const word = text.toLowerCase();
        if (TRUE_TEXT.has(word)) return true;
        if (FALSE_TEXT.has(word)) return false;
        return fail('true or false (or yes/no, 1/0)');
      }
    }
  }
  switch (type) {
    case 'string':
      return typeof raw === 'string' ? raw : fail('text (a JSON string)');
    case 'integer':
      if (typeof raw !== 'number' || !Number.isInteger(raw)) return fail('a whole number such as 42');
      if (!Number.isSafeInteger(raw))
        return fail('a whole number between -9007199254740991 and 9007199254740991');
      return raw === 0 ? 0 : raw;
    case 'float':
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return fail('a number such as 1.5');
      return raw === 0 ? 0 : raw;
    case 'boolean':
      return typeof raw === 'boolean' ? raw : fail('true or false');
  }
  return fail(`of a known type (not ${JSON.stringify(type)})`);
}

/** An input definition as far as parsing is concerned (SPEC.md 2.1 "Input definition"). */
export interface InputDefinition {
  key: string;
  type: InputType;
  /** Used when a run gives no value (a cron run, or a caller that leaves it out). */
  default?: string | number | boolean | null;
}

/**
 * Checks a whole set of input values against the definitions: every defined input must be present
 * and of its type, and no undefined input may appear. Returns the typed values.
 */
export function parseInputs(
  definitions: readonly InputDefinition[],
  raw: Readonly<Record<string, unknown>>,
  options: { fromText: boolean },
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key of Object.keys(raw)) {
    if (!definitions.some((d) => d.key === key)) {
      const known = definitions.map((d) => d.key).join(', ') || 'none';
      throw new InputError(`there is no input named '${key}' (inputs: ${known})`, key);
    }
  }
  for (const def of definitions) {
    const given = Object.hasOwn(raw, def.key) && raw[def.key] !== undefined;
    if (!given && (def.default === undefined || def.default === null)) {
      throw new InputError(`input '${def.key}' is required (a ${def.type})`, def.key);
    }
    const value = given
      ? parseInputValue(def.type, raw[def.key], { fromText: options.fromText, name: def.key })
      : parseInputValue(def.type, def.default, { fromText: false, name: def.key });
    Object.defineProperty(out, def.key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
