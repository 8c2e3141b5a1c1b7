// The parse cache is bounded by text, not by entries: a tree takes ~75 times its text in memory,
// so distinct large statements sent on purpose must not stay (adversarial review).
import { beforeAll, describe, expect, it } from 'vitest';
import { astify, loadPostgresParser, parsePostgres } from './parse.ts';

beforeAll(async () => {
  await loadPostgresParser();
});

/** A distinct SELECT of about `chars` characters. */
function statement(tag: number, chars: number): string {
  const head = `select ${tag} as tag`;
  const items: string[] = [];
  let n = head.length;
  for (let i = 0; n < chars; i++) {
    const item = `, ${i} as c${i}`;
    items.push(item);
    n += item.length;
  }
  return head + items.join('');
}

describe('sql/parse.ts cache', () => {
  it('hands the same tree back for a short statement, and a copy on request', () => {
    const sql = statement(1, 200);
    const a = parsePostgres(sql);
    expect(parsePostgres(sql)).toBe(a);
    const copy = parsePostgres(sql, { copy: true });
    expect(copy).not.toBe(a);
    expect(copy).toEqual(a);
  });

  it('does not keep a statement over 16 KB', () => {
    const sql = statement(2, 20_000);
    expect(parsePostgres(sql)).not.toBe(parsePostgres(sql));
    expect(astify(sql, 'MariaDB')).not.toBe(astify(sql, 'MariaDB'));
  });

  it('drops the oldest trees once 512 KB of text is kept', () => {
    const first = statement(3, 15_000);
    const tree = parsePostgres(first);
    expect(parsePostgres(first)).toBe(tree);
    for (let i = 0; i < 40; i++) parsePostgres(statement(100 + i, 15_000));
    expect(parsePostgres(first)).not.toBe(tree);
  });

  it('keeps a parse error, reported the same way each time, per grammar', () => {
    const bad = 'select from where';
    expect(() => parsePostgres(bad)).toThrow();
    const message = (() => {
      try {
        parsePostgres(bad);
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toMatch(/syntax error/);
  });
});
