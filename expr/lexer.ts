import { ExprError } from './errors.ts';

export type TokenKind = 'number' | 'string' | 'name' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** Punctuation and operator text, or the name; '' for literals and the end. */
  text: string;
  /** The value of a number or string literal. */
  value: string | number;
  pos: number;
  end: number;
}

const PUNCT_2 = new Set(['==', '!=', '<=', '>=', '&&', '||', '${']);
const PUNCT_1 = new Set(['<', '>', '!', '(', ')', '[', ']', '.', '}']);
const ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
  '\\': '\\',
  '"': '"',
  "'": "'",
  $: '$',
};

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isNameStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isNamePart = (c: number): boolean => isNameStart(c) || isDigit(c);

/** Splits expression source into tokens on demand, starting at any offset (templates embed
 *  expressions in `${...}`, so the lexer starts after the `${` and the parser stops at `}`). */
export class Lexer {
  constructor(
    private readonly source: string,
    private pos: number,
  ) {}

  next(): Token {
    const s = this.source;
    while (this.pos < s.length && /\s/.test(s[this.pos]!)) this.pos++;
    const start = this.pos;
    if (start >= s.length) return { kind: 'eof', text: '', value: '', pos: start, end: start };
    const c = s.charCodeAt(start);
    if (isDigit(c) || (c === 45 && isDigit(s.charCodeAt(start + 1)))) return this.number(start);
    if (c === 34 || c === 39) return this.string(start);
    if (isNameStart(c)) {
      let end = start + 1;
      while (end < s.length && isNamePart(s.charCodeAt(end))) end++;
      this.pos = end;
      return { kind: 'name', text: s.slice(start, end), value: '', pos: start, end };
    }
    const two = s.slice(start, start + 2);
    if (PUNCT_2.has(two)) return this.punct(two, start);
    const one = s[start]!;
    if (PUNCT_1.has(one)) return this.punct(one, start);
    throw new ExprError('syntax', unexpectedCharacter(one, s[start + 1]), start, '');
  }

  private punct(text: string, start: number): Token {
    this.pos = start + text.length;
    return { kind: 'punct', text, value: '', pos: start, end: this.pos };
  }

  // JSON's number syntax, but leading zeros are allowed; `-` belongs to the literal because the
  // language has no subtraction. `5.x` is the number 5 followed by `.x`.
  private number(start: number): Token {
    const s = this.source;
    let end = start;
    if (s[end] === '-') end++;
    while (isDigit(s.charCodeAt(end))) end++;
    if (s[end] === '.' && isDigit(s.charCodeAt(end + 1))) {
      end++;
      while (isDigit(s.charCodeAt(end))) end++;
    }
    if (s[end] === 'e' || s[end] === 'E') {
      let exp = end + 1;
      if (s[exp] === '+' || s[exp] === '-') exp++;
      if (!isDigit(s.charCodeAt(exp))) {
        throw new ExprError('syntax', 'a number’s exponent needs digits, as in 1e6', end, '');
      }
      while (isDigit(s.charCodeAt(exp))) exp++;
      end = exp;
    }
    if (isNameStart(s.charCodeAt(end))) {
      let word = end;
      while (isNamePart(s.charCodeAt(word))) word++;
      throw new ExprError('syntax', `"${s.slice(start, word)}" is neither a number nor a name`, start, '');
    }
    const value = Number(s.slice(start, end));
    if (!Number.isFinite(value)) throw new ExprError('syntax', 'this number is too large', start, '');
    this.pos = end;
    return { kind: 'number', text: '', value, pos: start, end };
  }

  private string(start: number): Token {
    const s = this.source;
    const quote = s[start]!;
    let out = '';
    let i = start + 1;
    for (;;) {
      if (i >= s.length) {
        throw new ExprError('syntax', `this string has no closing ${quote}`, start, '');
      }
      const ch = s[i]!;
      if (ch === quote) break;
      if (ch === '\\') {
        const esc = s[i + 1] ?? '';
        if (esc === 'u') {
          const hex = s.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            throw new ExprError('syntax', 'a \\u escape needs four hex digits, as in \\u00e9', i, '');
          }
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
          continue;
        }
        const decoded = ESCAPES[esc];
        if (decoded === undefined || !Object.hasOwn(ESCAPES, esc)) {
          throw new ExprError(
            'syntax',
            `unknown escape \\${esc} in a string (known: \\n \\r \\t \\b \\f \\\\ \\" \\' \\$ \\uXXXX)`,
            i,
            '',
          );
        }
        out += decoded;
        i += 2;
        continue;
      }
      if (ch === '$' && s[i + 1] === '{') {
        // `"${name}" == "bob"` would compare the text "${name}"; almost certainly not what was meant.
        throw new ExprError(
          'syntax',
          `references are not expanded inside a quoted string; write \${name} without quotes, or \\\${ for the literal text`,
          i,
          '',
        );
      }
      out += ch;
      i++;
    }
    this.pos = i + 1;
    return { kind: 'string', text: '', value: out, pos: start, end: this.pos };
  }
}

function unexpectedCharacter(ch: string, nextCh: string | undefined): string {
  if (ch === '=') return "'=' alone is not an operator; use '==' to compare";
  if (ch === '&') return "use '&&' for “and”";
  if (ch === '|') return "use '||' for “or”";
  if (ch === '-') return "'-' only starts a negative number such as -5; there is no arithmetic";
  if (ch === '$' && nextCh !== '{') return `'$' starts a reference only as \${...}`;
  if (ch === '{') return `'{' is only valid in \${...}`;
  return `unexpected character ${JSON.stringify(ch)}`;
}
