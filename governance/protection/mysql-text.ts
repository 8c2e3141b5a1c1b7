// The statement's text as MySQL/MariaDB reads it, for what node-sql-parser's tree does not keep:
// MariaDB names an unaliased select item after its text as written, so each item's text is
// found here; and a few constructs the parser does not read (DISTINCTROW, index hints,
// SUBSTRING ... FROM ... FOR, SOUNDS LIKE, JSON_ARRAYAGG ... ORDER BY) are spelled the way it does.

import { type Token, tokenize } from '../../sql/mysql-tokens.ts';
import { ProtectionRefusedError } from './rules.ts';

const upper = (t: Token | undefined) => (t?.kind === 'word' ? t.text.toUpperCase() : '');

const SELECT_OPTIONS = new Set([
  'ALL',
  'DISTINCT',
  'DISTINCTROW',
  'HIGH_PRIORITY',
  'STRAIGHT_JOIN',
  'SQL_SMALL_RESULT',
  'SQL_BIG_RESULT',
  'SQL_BUFFER_RESULT',
  'SQL_CACHE',
  'SQL_NO_CACHE',
  'SQL_CALC_FOUND_ROWS',
]);
const LIST_END = new Set([
  'FROM',
  'INTO',
  'WHERE',
  'GROUP',
  'HAVING',
  'WINDOW',
  'ORDER',
  'LIMIT',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'MINUS',
  'FOR',
  'LOCK',
  'PROCEDURE',
]);

/** The text of each item of each select list, in the order the SELECT keywords appear. */
export function selectLists(sql: string): string[][] {
  const tokens = tokenize(sql);
  const lists: string[][] = [];
  tokens.forEach((t, at) => {
    if (upper(t) !== 'SELECT') return;
    let i = at + 1;
    while (SELECT_OPTIONS.has(upper(tokens[i]))) i++;
    const items: string[] = [];
    let depth = 0;
    let first = i;
    const close = (last: number) => {
      if (last >= first) items.push(sql.slice(tokens[first]!.start, tokens[last]!.end));
    };
    for (; i < tokens.length; i++) {
      const tok = tokens[i]!;
      if (tok.text === '(') depth++;
      else if (tok.text === ')') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && (tok.text === ';' || LIST_END.has(upper(tok)))) break;
      else if (depth === 0 && tok.text === ',') {
        close(i - 1);
        first = i + 1;
      }
    }
    close(i - 1);
    lists.push(items);
  });
  return lists;
}

/** The name MariaDB gives an unaliased item: its text, without leading whitespace. */
export function itemName(text: string): string {
  return text.replace(/^\s+/, '');
}

const CHARSETS =
  /^_(UTF8MB4|UTF8MB3|UTF8|LATIN1|LATIN2|BINARY|ASCII|UTF16|UTF16LE|UTF32|UCS2|CP1250|CP1251|CP1252|GBK|BIG5|SJIS|EUCKR)$/;
const SUBSTRING = new Set(['SUBSTRING', 'SUBSTR', 'MID']);
const HINTS = new Set(['USE', 'FORCE', 'IGNORE']);

/**
 * The statement spelled the way node-sql-parser reads it, with the same meaning: DISTINCTROW is
 * DISTINCT; optimizer hints (STRAIGHT_JOIN, SQL_NO_CACHE, … as select options, index hints) do
 * not change a result and are left out; SUBSTRING(s FROM p FOR n) is SUBSTRING(s, p, n).
 * `a SOUNDS LIKE b` is SOUNDEX(a) = SOUNDEX(b). `jsonArrayagg` says what the caller must put
 * back in the tree: JSON_ARRAYAGG with ORDER BY is read as GROUP_CONCAT, when the statement
 * has none of its own.
 */
export function normalize(sql: string): { sql: string; jsonArrayagg: boolean } {
  const tokens = tokenize(sql);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const marks = { jsonArrayagg: false };
  const hasWord = (w: string) => tokens.some((t) => upper(t) === w);
  // A stack of open parentheses: which call each belongs to.
  const calls: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const u = upper(t);
    if (t.text === '(') calls.push(upper(tokens[i - 1]));
    else if (t.text === ')') calls.pop();
    const call = calls.at(-1) ?? '';
    const depthOfCall = calls.length;
    if (t.kind === 'number' && /^[0-9.]+[eE][-+]?[0-9]*$|^\./.test(t.text)) {
      // The parser reads 1e3 as a name and not .5 at all: the same DOUBLE / DECIMAL, spelled out.
      const sign = tokens[i + 1]?.text === '-' || tokens[i + 1]?.text === '+' ? tokens[i + 1]! : null;
      const exponentSign = /[eE]$/.test(t.text) && sign && tokens[i + 2]?.kind === 'number';
      const end = exponentSign ? tokens[i + 2]! : t;
      const text = sql.slice(t.start, end.end);
      edits.push({
        start: t.start,
        end: end.end,
        text: /[eE]/.test(text) ? `CAST('${text}' AS DOUBLE)` : `0${text}`,
      });
      if (exponentSign) i += 2;
    } else if (
      u.startsWith('_') &&
      tokens[i + 1]?.kind === 'string' &&
      (tokens[i + 1]!.start === t.end || CHARSETS.test(u))
    ) {
      throw new ProtectionRefusedError(
        `the character set introducer ${t.text}'…' is not supported under a policy; use CONVERT('…' USING ${t.text.slice(1)})`,
      );
    } else if (u === 'DISTINCTROW') edits.push({ start: t.start, end: t.end, text: 'DISTINCT' });
    else if (SELECT_OPTIONS.has(u) && !['ALL', 'DISTINCT'].includes(u) && isOptionOf(tokens, i)) {
      edits.push({ start: t.start, end: t.end, text: '' });
    } else if (u === 'STRAIGHT_JOIN') edits.push({ start: t.start, end: t.end, text: 'JOIN' });
    else if (HINTS.has(u) && ['INDEX', 'KEY'].includes(upper(tokens[i + 1]))) {
      // USE|FORCE|IGNORE INDEX|KEY [FOR JOIN|ORDER BY|GROUP BY] (names)
      let j = i + 2;
      if (upper(tokens[j]) === 'FOR') j += upper(tokens[j + 1]) === 'JOIN' ? 2 : 3;
      if (tokens[j]?.text !== '(') continue;
      while (j < tokens.length && tokens[j]!.text !== ')') j++;
      edits.push({ start: t.start, end: tokens[j]?.end ?? t.end, text: '' });
      i = j;
    } else if (SUBSTRING.has(call) && (u === 'FROM' || u === 'FOR') && depthOfCall > 0) {
      // Only at the call's own level: `calls` is pushed at its "(".
      if (sameLevel(tokens, i)) edits.push({ start: t.start, end: t.end, text: ',' });
    } else if (u === 'SOUNDS' && upper(tokens[i + 1]) === 'LIKE') {
      // a SOUNDS LIKE b is SOUNDEX(a) = SOUNDEX(b); done for simple operands (a name, a
      // literal, a parameter), where the operands' extent is plain; others stay unreadable.
      const left = operand(tokens, i - 1, -1);
      const right = operand(tokens, i + 2, 1);
      if (left !== null && right !== null) {
        const span = (a: number, b: number) => sql.slice(tokens[a]!.start, tokens[b]!.end);
        edits.push({
          start: tokens[left]!.start,
          end: tokens[right]!.end,
          text: `SOUNDEX(${span(left, i - 1)}) = SOUNDEX(${span(i + 2, right)})`,
        });
      }
      i = (right ?? i + 1) as number;
    } else if (
      u === 'JSON_ARRAYAGG' &&
      tokens[i + 1]?.text === '(' &&
      !hasWord('GROUP_CONCAT') &&
      orderedCall(tokens, i + 1)
    ) {
      edits.push({ start: t.start, end: t.end, text: 'GROUP_CONCAT' });
      marks.jsonArrayagg = true;
    }
  }
  let text = sql;
  for (const e of edits.sort((a, b) => b.start - a.start))
    text = text.slice(0, e.start) + e.text + text.slice(e.end);
  return { sql: text, ...marks };
}

const OPERAND = new Set(['word', 'quoted', 'string', 'number']);

/**
 * The far end of a simple operand starting at token `at` and going in `step` direction: a name
 * (`t.c`, `db.t.c`), a literal or `?`. Null when the operand is not that simple, or when an
 * operator beside it would bind it into a larger expression.
 */
function operand(tokens: Token[], at: number, step: 1 | -1): number | null {
  let i = at;
  const ok = (t: Token | undefined) => t !== undefined && (OPERAND.has(t.kind) || t.text === '?');
  if (!ok(tokens[i])) return null;
  while (tokens[i + step]?.text === '.' && ok(tokens[i + 2 * step])) i += 2 * step;
  const beyond = tokens[i + step];
  if (beyond && (beyond.kind === 'op' || beyond.text === '.' || (step === 1 && beyond.text === '(')))
    return null;
  return i;
}

/** Whether token i sits right after SELECT among its options. */
function isOptionOf(tokens: Token[], i: number): boolean {
  let j = i - 1;
  while (j >= 0 && SELECT_OPTIONS.has(upper(tokens[j]))) j--;
  return upper(tokens[j]) === 'SELECT';
}

/** Whether token i is at the top level of the parenthesis that encloses it (not in a nested one). */
function sameLevel(tokens: Token[], i: number): boolean {
  let depth = 0;
  for (let j = i - 1; j >= 0; j--) {
    const t = tokens[j]!.text;
    if (t === ')') depth++;
    else if (t === '(') {
      if (depth === 0) return true;
      depth--;
    }
  }
  return false;
}

/** Whether the call whose "(" is at `open` has an ORDER BY at its own level. */
function orderedCall(tokens: Token[], open: number): boolean {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t.text === '(') depth++;
    else if (t.text === ')' && --depth === 0) return false;
    else if (depth === 1 && upper(t) === 'ORDER' && upper(tokens[j + 1]) === 'BY') return true;
  }
  return false;
}
