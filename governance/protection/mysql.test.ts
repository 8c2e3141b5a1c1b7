import { describe, expect, it } from 'vitest';
import { rewriteMysql } from './mysql.ts';
import { ProtectionRefusedError } from './rules.ts';
import { testRules, testSchema } from './test-schema.ts';

const schema = testSchema('shop', true);
const rules = testRules(true);
const rewrite = (sql: string) => rewriteMysql(sql, schema, rules);

describe('MySQL rewriter: protected references are replaced wherever they appear', () => {
  it('select list, WHERE, GROUP BY, ORDER BY', () => {
    expect(rewrite("select email from users where email like 'a%' group by email order by email")).toBe(
      "SELECT '****' AS `email` FROM `users` WHERE '****' LIKE 'a%' GROUP BY '****' ORDER BY `email` ASC",
    );
  });

  it('column names are case-insensitive, as in MySQL', () => {
    expect(rewrite('select EMAIL from USERS')).toBe("SELECT '****' AS `EMAIL` FROM `USERS`");
  });

  it('* expands with hash and partial expressions; a CTE is rewritten inside', () => {
    const out = rewrite('with c as (select * from users) select * from c');
    expect(out).toContain("MD5(CONCAT('salt:', `users`.`ssn`)) AS `ssn`");
    expect(out).toContain('RIGHT(`users`.`phone`, 2)');
    expect(out).toContain('SELECT `c`.* FROM `c`');
  });

  it('double-quoted literals are printed single-quoted (ANSI_QUOTES cannot turn them into columns)', () => {
    expect(rewrite('select "email", name from users')).toBe("SELECT 'email', `name` FROM `users`");
  });
});

describe('MySQL rewriter: what cannot be proven safe is refused', () => {
  it.each([
    ['select * from information_schema.columns', /system schema/],
    ['select * from otherdb.users', /not known/],
    ["select * from users into outfile '/tmp/x'", /INTO is refused/],
    ['handler users open', /HANDLER is refused/],
    ["select 'a\\', (select email from users) -- '", /string literal/],
    ['select sleep(1)', /sleep/],
    ["select 1 from users join (select 'x' as email) g using (email)", /USING/],
  ])('%s', (sql, message) => {
    expect(() => rewrite(sql)).toThrow(message);
    expect(() => rewrite(sql)).toThrow(ProtectionRefusedError);
  });
});
