import { describe, expect, it } from 'vitest';
import { rewriteMysql } from '../governance/protection/mysql.ts';
import { ProtectionParseError, ProtectionRefusedError } from '../governance/protection/rules.ts';
import { inverseStatement } from '../governance/undo/statements.ts';
import { testRules, testSchema } from '../test/fixtures/protection-schema.ts';

const schema = testSchema('shop', true);
const rules = testRules(true);
const rewrite = (sql: string) => rewriteMysql(sql, schema, rules);
const thrown = (sql: string): unknown => {
  try {
    rewrite(sql);
  } catch (e) {
    return e;
  }
  return null;
};

const kept = {
  schema: 'shop',
  name: 'users',
  keys: ['id'],
  columns: ['id', 'email', 'name', 'ssn', 'phone'],
};

// An undo's inverse is checked with the rules of an undo: it writes back kept rows, so a
// hashed column may be written (RuleBook.restoresKeptRows); any other write of it is refused.
const restore = (sql: string) => rewriteMysql(sql, schema, testRules(true, true));

describe('MySQL under a policy: JSON_TABLE over one parameter (the inverse of an undo)', () => {
  it('an UPDATE back by key, setting a protected column blindly, runs exactly as written', () => {
    const sql = inverseStatement('mysql', { ...kept, verb: 'UPDATE', assigned: ['name', 'ssn'] });
    expect(() => rewrite(sql)).toThrow(/shows hashed/);
    const out = restore(sql);
    expect(out).toContain(
      "JSON_TABLE(?, '$[*]' COLUMNS (v0 LONGTEXT PATH '$.v0', v1 LONGTEXT PATH '$.v1', v2 LONGTEXT PATH '$.v2', v3 LONGTEXT PATH '$.v3', v4 LONGTEXT PATH '$.v4')) AS `undo_saved`",
    );
    expect(out).toMatch(/^UPDATE `shop`\.`users` AS `undo_target` INNER JOIN JSON_TABLE\(/);
    expect(out).not.toContain('countersign_jt_');
    expect(out.split('?').length - 1).toBe(1);
  });

  it('an INSERT of the rows a DELETE took, protected columns included, runs', () => {
    const sql = inverseStatement('mysql', { ...kept, verb: 'DELETE', assigned: [] });
    const out = restore(sql);
    expect(out).toMatch(/^INSERT INTO `shop`\.`users` \(id, email, name, ssn, phone\) SELECT UNHEX/);
    expect(out).toContain("FROM JSON_TABLE(?, '$[*]' COLUMNS (v0 LONGTEXT PATH '$.v0'");
  });

  it('rows matched by a protected column are refused, as any write that reads one', () => {
    const sql = inverseStatement('mysql', { ...kept, keys: ['ssn'], verb: 'UPDATE', assigned: ['name'] });
    const err = thrown(sql);
    expect(err).toBeInstanceOf(ProtectionRefusedError);
    expect((err as ProtectionRefusedError).detail).toContain('users.ssn');
  });

  it('a JSON_TABLE over anything but a parameter, or of another shape, stays unreadable (fail closed)', () => {
    for (const sql of [
      "select j.a from json_table((select email from users limit 1), '$[*]' columns (a longtext path '$.a')) as j",
      "select j.a from json_table(?, '$[*]' columns (a longtext path '$.a', nested path '$.b' columns (b int path '$'))) as j",
      "select j.a from json_table(?, '$[*]' columns (a longtext path '$.a' default 'x' on empty)) as j",
      "select j.a from json_table(?, concat('$', '[*]') columns (a longtext path '$.a')) as j",
    ])
      expect(thrown(sql), sql).toBeInstanceOf(ProtectionParseError);
  });

  it('a select of a JSON_TABLE over a parameter reads no table, and a protected column beside it is still masked', () => {
    const out = rewrite(
      "select j.a, u.email from json_table(?, '$[*]' columns (a longtext path '$.a')) as j join users u on u.id = j.a",
    );
    expect(out).toContain("JSON_TABLE(?, '$[*]' COLUMNS (a LONGTEXT PATH '$.a')) AS `j`");
    expect(out).toContain("'****' AS `email`");
    expect(out).not.toContain('countersign_jt_');
  });

  it('the shape written in a comment is not read as one; in a string it is refused as such strings are', () => {
    const text = "JSON_TABLE(?, '$[*]' COLUMNS (a LONGTEXT PATH '$.a'))";
    expect(rewrite(`select id from users /* ${text} */`)).toBe('SELECT `id` FROM `users`');
    expect(thrown(`select id from users where name = "${text}"`)).toBeInstanceOf(ProtectionRefusedError);
  });
});
