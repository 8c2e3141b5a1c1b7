/**
 * A lexical scan of SQL text, just enough to tell whether a position is plain code or inside a string
 * literal, a quoted identifier or a comment, and to find placeholders the author wrote by hand.
 *
 * The scan decides nothing about safety: values never enter the SQL text whatever it concludes
 * (sql.ts). A wrong guess can only turn into a refused template or a query the database rejects for a
 * parameter-count mismatch. So where dialects differ, the scan leans towards "quoted".
 */
/** The SQL dialects templates render for (expr/sql.ts). */
export type SqlStyle = 'postgres' | 'mysql' | 'clickhouse' | 'sqlserver' | 'oracle';

export type ScanResult =
  | { kind: 'code' }
  /** The text ends inside a construct that opened at `index`. */
  | { kind: 'open'; what: Construct; index: number }
  /** A placeholder of the target style written by hand, at `index`. */
  | { kind: 'placeholder'; text: string; index: number };

export type Construct = 'string' | 'identifier' | 'comment';

const IDENT_CHAR = /[\p{L}\p{N}_$]/u;
const DOLLAR_TAG = /\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/uy;
const CLICKHOUSE_PARAM = /\{\s*[A-Za-z_][A-Za-z0-9_]*\s*:/y;
const Q_QUOTE_CLOSERS: Record<string, string> = { '[': ']', '{': '}', '(': ')', '<': '>' };

/** Scans `text` from plain code to its end. */
export function scanSql(text: string, style: SqlStyle): ScanResult {
  const backslashStrings = style === 'mysql' || style === 'clickhouse';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    let end: number;
    switch (c) {
      case "'": {
        if (style === 'oracle' && isQQuote(text, i)) {
          // Oracle q'[...]': the closing delimiter followed by a quote ends it.
          const open = text[i + 1];
          if (open === undefined) return { kind: 'open', what: 'string', index: i - 1 };
          const close = `${Q_QUOTE_CLOSERS[open] ?? open}'`;
          end = text.indexOf(close, i + 2);
          if (end === -1) return { kind: 'open', what: 'string', index: i - 1 };
          i = end + 2;
          continue;
        }
        // Postgres E'...' strings take backslash escapes; its plain strings do not.
        const escapes = backslashStrings || (style === 'postgres' && isEStringPrefix(text, i));
        end = quoteEnd(text, i + 1, "'", escapes);
        if (end === -1) return { kind: 'open', what: 'string', index: i };
        i = end + 1;
        continue;
      }
      case '"':
        end = quoteEnd(text, i + 1, '"', backslashStrings);
        if (end === -1) return { kind: 'open', what: style === 'mysql' ? 'string' : 'identifier', index: i };
        i = end + 1;
        continue;
      case '`':
        if (style === 'mysql' || style === 'clickhouse') {
          end = quoteEnd(text, i + 1, '`', style === 'clickhouse');
          if (end === -1) return { kind: 'open', what: 'identifier', index: i };
          i = end + 1;
          continue;
        }
        break;
      case '[':
        if (style === 'sqlserver') {
          end = quoteEnd(text, i + 1, ']', false);
          if (end === -1) return { kind: 'open', what: 'identifier', index: i };
          i = end + 1;
          continue;
        }
        break;
      case '-':
        // MySQL needs whitespace after `--` for a comment; reading one where there is none only
        // refuses a template, so the end of the text counts as whitespace.
        if (next === '-' && (style !== 'mysql' || i + 2 >= text.length || text.charCodeAt(i + 2) <= 32)) {
          end = text.indexOf('\n', i);
          if (end === -1) return { kind: 'open', what: 'comment', index: i };
          i = end + 1;
          continue;
        }
        break;
      case '#':
        if (style === 'mysql' || style === 'clickhouse') {
          end = text.indexOf('\n', i);
          if (end === -1) return { kind: 'open', what: 'comment', index: i };
          i = end + 1;
          continue;
        }
        break;
      case '/':
        if (next === '*') {
          end = blockCommentEnd(text, i, style === 'postgres' || style === 'sqlserver');
          if (end === -1) return { kind: 'open', what: 'comment', index: i };
          i = end;
          continue;
        }
        break;
      case '$':
        if (style === 'postgres' && !identBefore(text, i)) {
          if (next !== undefined && next >= '0' && next <= '9') return placeholder(text, i, /^\$\d+/);
          DOLLAR_TAG.lastIndex = i;
          const tag = DOLLAR_TAG.exec(text);
          if (tag !== null) {
            end = text.indexOf(tag[0], i + tag[0].length);
            if (end === -1) return { kind: 'open', what: 'string', index: i };
            i = end + tag[0].length;
            continue;
          }
        }
        break;
      case '?':
        if (style === 'mysql') return placeholder(text, i, /^\?/);
        break;
      case ':':
        if (style === 'oracle' && next !== undefined && /[A-Za-z0-9_]/.test(next)) {
          return placeholder(text, i, /^:\w+/);
        }
        break;
      case '@':
        if (style === 'sqlserver' && !identBefore(text, i) && /^@p\d/i.test(text.slice(i, i + 3))) {
          return placeholder(text, i, /^@p\d+/i);
        }
        break;
      case '{':
        if (style === 'clickhouse') {
          CLICKHOUSE_PARAM.lastIndex = i;
          if (CLICKHOUSE_PARAM.test(text)) return placeholder(text, i, /^\{[^}]*\}?/);
        }
        break;
    }
    i++;
  }
  return { kind: 'code' };
}

function identBefore(text: string, i: number): boolean {
  return i > 0 && IDENT_CHAR.test(text[i - 1]!);
}

function placeholder(text: string, index: number, pattern: RegExp): ScanResult {
  return { kind: 'placeholder', text: pattern.exec(text.slice(index))?.[0] ?? text[index]!, index };
}

// Index of the closing quote, skipping doubled quotes ('it''s') and, where the dialect has them,
// backslash escapes; -1 when the text ends first.
function quoteEnd(text: string, from: number, quote: string, backslash: boolean): number {
  for (let j = from; j < text.length; j++) {
    const c = text[j];
    if (backslash && c === '\\') {
      j++;
    } else if (c === quote) {
      if (text[j + 1] !== quote) return j;
      j++;
    }
  }
  return -1;
}

// Index just past the comment's end; Postgres and SQL Server nest block comments.
function blockCommentEnd(text: string, start: number, nested: boolean): number {
  let depth = 0;
  for (let j = start; j < text.length - 1; j++) {
    if (text[j] === '/' && text[j + 1] === '*') {
      if (depth === 0 || nested) depth++;
      j++;
    } else if (text[j] === '*' && text[j + 1] === '/') {
      depth--;
      j++;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

function isEStringPrefix(text: string, quote: number): boolean {
  const p = text[quote - 1];
  return (p === 'e' || p === 'E') && (quote < 2 || !IDENT_CHAR.test(text[quote - 2]!));
}

// q'x...x' or nq'x...x' (the quote at `quote`, preceded by q).
function isQQuote(text: string, quote: number): boolean {
  const p = text[quote - 1];
  if (p !== 'q' && p !== 'Q') return false;
  const before = text[quote - 2];
  if (before === undefined || !IDENT_CHAR.test(before)) return true;
  return (before === 'n' || before === 'N') && (quote < 3 || !IDENT_CHAR.test(text[quote - 3]!));
}
