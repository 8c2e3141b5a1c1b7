/**
 * Comparison rules (expr/README.md "Comparisons"). No JavaScript coercion: values of different types
 * are not converted into each other, with one narrow, documented exception for numbers written as
 * text, because databases return big integers and decimals as text (Postgres `count(*)` is a bigint).
 *
 * - `==` / `!=`: null equals only null, and compares with anything. Same-type scalars compare by
 *   value; lists and objects compare structurally. A number and text that is a number in digits
 *   (`"42"`, `"-1.5"`, `"1e3"`) compare as numbers. Any other mix (`1 == "abc"`, `true == "true"`,
 *   `[1] == 1`) is a `type_mismatch` error.
 * - `<` `<=` `>` `>=`: numbers by value; a number and numeric text as numbers; two texts as numbers
 *   when both are numeric (`"10" > "9"`), else by Unicode code point, never by locale. Ordering null,
 *   booleans, lists or objects, or a number with non-numeric text, is a `type_mismatch` error.
 */
import type { CompareOp } from './ast.ts';
import { ExprError } from './errors.ts';
import { deepEqual, describe, typeOf } from './values.ts';

const NUMERIC_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** True when `text` is a number written in digits (optional `-`, fraction, exponent; no spaces). */
export function isNumericText(text: string): boolean {
  return NUMERIC_TEXT.test(text);
}

export function equalValues(left: unknown, right: unknown, op: CompareOp, pos: number): boolean {
  if (left === null || right === null) return left === right;
  const tl = typeof left;
  const tr = typeof right;
  if (tl === tr && tl !== 'object') return left === right;
  if (tl === 'number' && tr === 'string' && isNumericText(right as string)) return left === Number(right);
  if (tl === 'string' && tr === 'number' && isNumericText(left as string)) return Number(left) === right;
  const kl = typeOf(left);
  if ((kl === 'list' || kl === 'object') && kl === typeOf(right)) return deepEqual(left, right, pos);
  throw mismatch(left, right, op, pos);
}

/** Negative, zero or positive as `left` orders before, with or after `right`. */
export function compareValues(left: unknown, right: unknown, op: CompareOp, pos: number): number {
  const tl = typeof left;
  const tr = typeof right;
  if (tl === 'number' && tr === 'number') return cmp(left as number, right as number);
  if (tl === 'string' && tr === 'string') {
    const a = left as string;
    const b = right as string;
    return isNumericText(a) && isNumericText(b) ? compareDecimalText(a, b) : compareCodePoints(a, b);
  }
  if (tl === 'number' && tr === 'string' && isNumericText(right as string)) {
    return cmp(left as number, Number(right));
  }
  if (tl === 'string' && tr === 'number' && isNumericText(left as string)) {
    return cmp(Number(left), right as number);
  }
  throw mismatch(left, right, op, pos);
}

// Numeric text may overflow to Infinity ("1e999"); Infinity - Infinity would be NaN.
function cmp(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function mismatch(left: unknown, right: unknown, op: CompareOp, pos: number): ExprError {
  const ordering = op !== '==' && op !== '!=';
  let hint: string;
  if (typeof left === 'string' || typeof right === 'string') {
    hint = 'text is compared with a number only when it is a number in digits, such as "42"';
  } else if (ordering) {
    hint = `'${op}' orders numbers and text only`;
  } else {
    hint = 'values of different types are never equal by conversion';
  }
  return new ExprError(
    'type_mismatch',
    `cannot compare ${describe(left)} with ${describe(right)} using '${op}': ${hint}`,
    pos,
    '',
  );
}

// Exact comparison of decimal texts, so integers beyond 2^53 (Postgres bigint, numeric) order
// correctly; texts with an exponent fall back to floating point.
function compareDecimalText(a: string, b: string): number {
  if (/[eE]/.test(a) || /[eE]/.test(b)) return cmp(Number(a), Number(b));
  const negA = a.startsWith('-');
  const negB = b.startsWith('-');
  const [intA, fracA] = splitDecimal(negA ? a.slice(1) : a);
  const [intB, fracB] = splitDecimal(negB ? b.slice(1) : b);
  const zeroA = intA === '' && fracA === '';
  const zeroB = intB === '' && fracB === '';
  if (zeroA && zeroB) return 0;
  const signA = zeroA ? 0 : negA ? -1 : 1;
  const signB = zeroB ? 0 : negB ? -1 : 1;
  if (signA !== signB) return signA - signB;
  let magnitude = intA.length - intB.length;
  if (magnitude === 0) magnitude = compareCodePoints(intA, intB);
  if (magnitude === 0) magnitude = compareCodePoints(fracA, fracB);
  return signA * magnitude;
}

// "007.500" -> ["7", "5"]: no leading zeros in the integer part, no trailing zeros in the fraction,
// so digit strings of equal length compare lexically.
function splitDecimal(text: string): [string, string] {
  const dot = text.indexOf('.');
  const int = (dot === -1 ? text : text.slice(0, dot)).replace(/^0+/, '');
  const frac = dot === -1 ? '' : text.slice(dot + 1).replace(/0+$/, '');
  return [int, frac];
}

/** Orders texts by Unicode code point (UTF-16 code units order astral characters before U+E000..U+FFFF;
 *  this corrects that, so the order matches UTF-8 byte order and a database's C collation). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return fixup(ca) - fixup(cb);
  }
  return a.length - b.length;
}

function fixup(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}
