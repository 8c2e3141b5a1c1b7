// JSON_TABLE over one bound parameter, which node-sql-parser does not read (the inverse of an undo
// on MySQL/MariaDB is such a statement, governance/undo/statements.ts), for the data-protection
// analysis (governance/protection/mysql.ts). Its rows come from the parameter alone and it reads
// no table, so for the analysis it stands in as a derived table of the same columns over that
// parameter, `(SELECT ? AS c0, NULL AS c1, …)`, which the parser
// reads; once the statement is checked and printed, the derived table is put back as the
// JSON_TABLE, rebuilt from the parts checked here (null when it is not found as printed: the caller
// refuses). Only this exact shape is read: a document that is a `?`, plain names, plain paths, a
// few types; any other JSON_TABLE is left to the parser, which cannot read it (fail closed).
import { randomBytes } from 'node:crypto';
import { type Token, tokenize } from './mysql-tokens.ts';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `$[*]`, `$.name`, `$.a.b`: a path that selects by plain names and every array element only. */
const PATH = /^'\$(\[\*\]|\.[A-Za-z_][A-Za-z0-9_]*)*'$/;
const TYPES = new Set(['LONGTEXT', 'MEDIUMTEXT', 'TEXT', 'JSON', 'INT', 'INTEGER', 'BIGINT', 'DOUBLE']);

interface Found {
  start: number;
  end: number;
  /** The JSON_TABLE as it is put back: rebuilt from the checked parts. */
  text: string;
  /** The derived table standing in for it, as the printer prints it too. */
  stand: string;
  /** The stand-in's last column: a name no statement can guess, to find it again. */
  mark: string;
}

/** The statement with each JSON_TABLE over a parameter as a derived table, and how to put it back. */
export function standInJsonTables(sql: string): { sql: string; restore(printed: string): string | null } {
  const tokens = tokenize(sql);
  const found: Found[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.kind === 'word' && tokens[i]!.text.toUpperCase() === 'JSON_TABLE') {
      const f = readJsonTable(tokens, i);
      if (f) found.push(f);
    }
  }
  if (found.length === 0) return { sql, restore: (printed) => printed };
  let out = sql;
  for (const f of [...found].sort((a, b) => b.start - a.start))
    out = out.slice(0, f.start) + f.stand + out.slice(f.end);
  return {
    sql: out,
    restore(printed) {
      let text = printed;
      for (const f of found) {
        const parts = text.split(f.stand);
        if (parts.length !== 2) return null;
        text = parts.join(f.text);
      }
      return found.some((f) => text.includes(f.mark)) ? null : text;
    },
  };
}

/** `JSON_TABLE(?, 'path' COLUMNS (name TYPE PATH 'path', …))` from token `at`, or null. */
function readJsonTable(tokens: Token[], at: number): Found | null {
  let i = at + 1;
  const is = (text: string) => tokens[i]?.text.toUpperCase() === text && i++ >= 0;
  if (!is('(') || !is('?') || !is(',')) return null;
  const rowPath = tokens[i++];
  if (rowPath?.kind !== 'string' || !PATH.test(rowPath.text)) return null;
  if (!is('COLUMNS') || !is('(')) return null;
  const columns: Array<{ name: string; type: string; path: string }> = [];
  for (;;) {
    const name = tokens[i++];
    const type = tokens[i++];
    if (name?.kind !== 'word' || !NAME.test(name.text)) return null;
    if (type?.kind !== 'word' || !TYPES.has(type.text.toUpperCase())) return null;
    if (!is('PATH')) return null;
    const path = tokens[i++];
    if (path?.kind !== 'string' || !PATH.test(path.text)) return null;
    columns.push({ name: name.text, type: type.text.toUpperCase(), path: path.text });
    if (is(',')) continue;
    if (is(')')) break;
    return null;
  }
  if (!is(')')) return null;
  const lower = new Set(columns.map((c) => c.name.toLowerCase()));
  if (lower.size !== columns.length) return null;
  const mark = `countersign_jt_${randomBytes(8).toString('hex')}`;
  const items = columns.map((c, k) => `${k === 0 ? '?' : 'NULL'} AS \`${c.name}\``);
  return {
    start: tokens[at]!.start,
    end: tokens[i - 1]!.end,
    text: `JSON_TABLE(?, ${rowPath.text} COLUMNS (${columns.map((c) => `${c.name} ${c.type} PATH ${c.path}`).join(', ')}))`,
    stand: `(SELECT ${[...items, `NULL AS \`${mark}\``].join(', ')})`,
    mark,
  };
}
