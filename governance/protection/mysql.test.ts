import { describe, expect, it } from 'vitest';
import { testRules, testSchema } from '../../test/fixtures/protection-schema.ts';
import { rewriteMysql } from './mysql.ts';
import { ProtectionRefusedError, ServerStyleError } from './rules.ts';

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
    ['select * from otherdb.users', /Table 'otherdb.users' doesn't exist/],
    ["select 1 as 'a`, email, `b' from users", /backquote/],
    ['select benchmark(10, md5(email)) from users', /timing/],
    ['select shop.leak() from users', /stored function/],
    ["select * from users into outfile '/tmp/x'", /INTO is refused/],
    ['handler users open', /HANDLER is refused/],
    ["select 'a\\', (select email from users) -- '", /string literal/],
    ['select sleep(1)', /sleep/],
    ["select 1 from users join (select 'x' as email) g using (email)", /USING/],
  ])('%s', (sql, message) => {
    expect(() => rewrite(sql)).toThrow(message);
    expect(() => rewrite(sql)).toThrow(sql.includes('otherdb') ? ServerStyleError : ProtectionRefusedError);
  });

  it('an unknown column answers as the server would, naming its clause', () => {
    expect(() => rewrite('select emial from users')).toThrow("Unknown column 'emial' in 'field list'");
    expect(() => rewrite('select id from users where emial = 1')).toThrow(
      "Unknown column 'emial' in 'where clause'",
    );
  });
});

describe('MySQL rewriter: names and syntax', () => {
  it('an expression item is named with its text as written, never the rewritten one', () => {
    const out = rewrite("select lower( ssn ), group_concat(name), 1+1, 'abc' from users");
    expect(out).toContain('AS `lower( ssn )`');
    expect(out).toContain('AS `group_concat(name)`');
    expect(out).toContain('1 + 1 AS `1+1`');
    expect(out).toContain("'abc' FROM");
  });

  it('a backquote in the text is doubled inside the alias', () => {
    expect(rewrite('select lower(`ssn`) from users')).toContain('AS `lower(``ssn``)`');
  });

  it.each([
    ['select substring(email from 2 for 3) from users', "substring('****', 2, 3)"],
    ['select distinctrow name from users force index (primary)', 'SELECT DISTINCT `name` FROM `users`'],
    ['select straight_join u.name from users u straight_join orders o on o.user_id = u.id', 'INNER JOIN'],
    ["select id from users where name sounds like 'x'", "SOUNDEX(`name`) = SOUNDEX('x')"],
    ['select json_arrayagg(ssn order by id) from users', 'JSON_ARRAYAGG(MD5('],
    ['select sum(id) over w from users window w as (order by email)', "WINDOW w AS (ORDER BY '****' ASC)"],
    ['select convert(ssn using utf8mb4) from users', 'CONVERT(MD5(CONCAT('],
  ])('%s', (sql, printed) => {
    expect(rewrite(sql)).toContain(printed);
  });
});
