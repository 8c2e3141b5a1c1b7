import { ExprError } from './errors.ts';

/** A value an expression produces: JSON. */
export type Value = null | boolean | number | string | readonly Value[] | { readonly [key: string]: Value };

/** Nesting limit when walking values from the context (equality, JSON text): bounds recursion and
 *  turns a cyclic structure into an error instead of a stack overflow. */
export const MAX_VALUE_DEPTH = 200;

/** `null`, `boolean`, `number`, `string`, `list`, `object`, or `unsupported` for anything that is not
 *  JSON (undefined, bigint, symbol, function, a non-finite number). */
export type ValueType = 'null' | 'boolean' | 'number' | 'string' | 'list' | 'object' | 'unsupported';

export function typeOf(value: unknown): ValueType {
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isFinite(value) ? 'number' : 'unsupported';
    case 'boolean':
      return 'boolean';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? 'list' : 'object';
    default:
      return 'unsupported';
  }
}

/** A short description for error messages: `number 3`, `text "abc"`, `a list of 2`, `an object`. */
export function describe(value: unknown): string {
  switch (typeOf(value)) {
    case 'null':
      return 'null';
    case 'boolean':
      return `boolean ${value}`;
    case 'number':
      return `number ${value}`;
    case 'string': {
      const s = value as string;
      return `text ${JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s)}`;
    }
    case 'list':
      return `a list of ${(value as unknown[]).length}`;
    case 'object':
      return 'an object';
    default:
      if (value === undefined) return 'undefined (no value)';
      return typeof value === 'number' ? `the number ${value}` : `a ${typeof value}`;
  }
}

/** The text form of a value (text templates, and values spliced into a longer JSON string):
 *  strings as they are, numbers and booleans as written in JSON, null as `null`, lists and objects
 *  as compact JSON. */
export function toText(value: unknown, pos: number): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return toJsonText(value, pos);
  }
}

/** Strict JSON text of a value; anything that is not JSON is an ExprError (JSON.stringify would
 *  silently drop undefined and turn NaN into null). */
export function toJsonText(value: unknown, pos: number, depth = 0): string {
  switch (typeOf(value)) {
    case 'null':
      return 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Object.is(value, -0) ? '0' : String(value);
    case 'string':
      return JSON.stringify(value);
    case 'list': {
      checkDepth(depth, pos);
      const list = value as readonly unknown[];
      let out = '[';
      for (let i = 0; i < list.length; i++) out += (i > 0 ? ',' : '') + toJsonText(list[i], pos, depth + 1);
      return `${out}]`;
    }
    case 'object': {
      checkDepth(depth, pos);
      const obj = value as Readonly<Record<string, unknown>>;
      let out = '{';
      let first = true;
      for (const key of Object.keys(obj)) {
        out += `${first ? '' : ','}${JSON.stringify(key)}:${toJsonText(obj[key], pos, depth + 1)}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      throw new ExprError('unsupported_value', `${describe(value)} has no JSON form`, pos, '');
  }
}

/** Structural equality of two values of the same JSON type (used by `==` on lists and objects). */
export function deepEqual(a: unknown, b: unknown, pos: number, depth = 0): boolean {
  if (a === b) return true;
  const ta = typeOf(a);
  if (ta !== typeOf(b)) return false;
  if (ta === 'list') {
    checkDepth(depth, pos);
    const la = a as readonly unknown[];
    const lb = b as readonly unknown[];
    if (la.length !== lb.length) return false;
    for (let i = 0; i < la.length; i++) if (!deepEqual(la[i], lb[i], pos, depth + 1)) return false;
    return true;
  }
  if (ta === 'object') {
    checkDepth(depth, pos);
    const oa = a as Readonly<Record<string, unknown>>;
    const ob = b as Readonly<Record<string, unknown>>;
    const keys = Object.keys(oa);
    if (keys.length !== Object.keys(ob).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(ob, key) || !deepEqual(oa[key], ob[key], pos, depth + 1)) return false;
    }
    return true;
  }
  return false;
}

function checkDepth(depth: number, pos: number): void {
  if (depth >= MAX_VALUE_DEPTH) {
    throw new ExprError(
      'too_deep',
      `a value nests more than ${MAX_VALUE_DEPTH} levels (or refers to itself)`,
      pos,
      '',
    );
  }
}
