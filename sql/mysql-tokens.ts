// The tokens of a MySQL/MariaDB statement as the server splits it: words, quoted names, strings,
// numbers, punctuation and operators, with comments and whitespace left out.

export interface Token {
  kind: 'word' | 'quoted' | 'string' | 'number' | 'punct' | 'op';
  text: string;
  start: number;
  end: number;
}

const WORD = /[A-Za-z0-9_$@\u0080-\uffff]/;

/** Tokens of a statement, comments and whitespace left out. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const start = i;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '#' || (c === '-' && sql[i + 1] === '-' && /[\s]|$/.test(sql[i + 2] ?? ''))) {
      while (i < n && sql[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < n) {
        if (sql[i] === '\\' && c !== '`') i += 2;
        else if (sql[i] === c && sql[i + 1] === c) i += 2;
        else if (sql[i] === c) break;
        else i++;
      }
      i++;
      out.push({ kind: c === '`' ? 'quoted' : 'string', text: sql.slice(start, i), start, end: i });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      while (i < n && /[0-9A-Za-z_.]/.test(sql[i]!)) i++;
      out.push({ kind: 'number', text: sql.slice(start, i), start, end: i });
      continue;
    }
    if (WORD.test(c)) {
      while (i < n && WORD.test(sql[i]!)) i++;
      out.push({ kind: 'word', text: sql.slice(start, i), start, end: i });
      continue;
    }
    if ('(),;.'.includes(c)) {
      out.push({ kind: 'punct', text: c, start, end: i + 1 });
      i++;
      continue;
    }
    const op = ['<=>', '->>', '<=', '>=', '<>', '!=', ':=', '||', '&&', '<<', '>>', '->'].find((o) =>
      sql.startsWith(o, i),
    );
    i += op ? op.length : 1;
    out.push({ kind: 'op', text: sql.slice(start, i), start, end: i });
  }
  return out;
}
