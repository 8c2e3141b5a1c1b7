import { describe, expect, it } from 'vitest';
import { testRules, testSchema } from '../../test/fixtures/protection-schema.ts';
import { rewriteMysql } from './mysql.ts';
import { ProtectionRefusedError } from './rules.ts';

const schema = testSchema('shop', true);
const rules = testRules(true);
const rewrite = (sql: string) => rewriteMysql(sql, schema, rules);

function refusal(sql: string): string {
  let err: unknown = null;
  try {
    rewrite(sql);
  } catch (e) {
    err = e;
  }
  expect(err, sql).toBeInstanceOf(ProtectionRefusedError);
  return (err as ProtectionRefusedError).detail;
}

describe('MySQL writes under a policy: what reads nothing protected runs, printed as analyzed', () => {
  it.each([
    ['update orders set total = 0 where id = 7', 'UPDATE `orders` SET `total` = 0 WHERE `id` = 7'],
    [
      "update users set email = 'x@y', phone = ? where id = 3",
      "UPDATE `users` SET `email` = 'x@y', `phone` = ? WHERE `id` = 3",
    ],
    [
      "insert into users (id, email, phone) values (9, ?, '123')",
      "INSERT INTO `users` (id, email, phone) VALUES (9,?,'123')",
    ],
    ["replace into users (id, phone) values (9, '1')", "REPLACE INTO `users` (id, phone) VALUES (9,'1')"],
    ['delete from users where name = ?', 'DELETE FROM `users` WHERE `name` = ?'],
    ["insert into users set id = 1, email = 'x'", "INSERT INTO `users` SET `id` = 1, `email` = 'x'"],
    [
      "insert into users (id, email) values (1, 'x') on duplicate key update email = values(email), name = 'n'",
      "INSERT INTO `users` (id, email) VALUES (1,'x') ON DUPLICATE KEY UPDATE `email` = values(`email`), `name` = 'n'",
    ],
    ['insert into orders (id, user_id) select id, id from users where name = ?', null],
    ['update orders o join users u on u.id = o.user_id set o.total = u.id where u.name = ?', null],
    ["delete o from orders o join users u on u.id = o.user_id where u.name = 'x'", null],
    ['create table t (id int primary key, note varchar(10))', null],
    ['create view v as select id, name from users', null],
    ['create index i on users (name)', null],
    ['alter table users add column note varchar(10)', null],
    ['drop table orders', null],
    ['truncate table orders', null],
  ])('%s', (sql, printed) => {
    const out = rewrite(sql);
    if (printed) expect(out).toBe(printed);
    else expect(out).toMatch(new RegExp(`^${sql.split(' ')[0]!.toUpperCase()} `));
    expect(out).not.toContain('****');
  });
});

describe('MySQL writes under a policy: a read of a protected column is refused, naming it and the clause', () => {
  it.each([
    ['update users set name = email where id = 1', 'users.email', 'the SET clause'],
    ["update users set name = 'x' where ssn = '1'", 'users.ssn', 'the WHERE clause'],
    [
      "update orders o join users u on u.id = o.user_id and u.email = 'a' set o.total = 1",
      'users.email',
      'the JOIN condition',
    ],
    [
      "delete from users where id in (select id from users where email = 'a')",
      'users.email',
      'the WHERE clause',
    ],
    ['delete from users returning email', 'users.email', 'RETURNING'],
    [
      'insert into orders (id, user_id) select id, length(ssn) from users',
      'users.ssn',
      'the inserted values',
    ],
    [
      'insert into users (id) values (1) on duplicate key update name = email',
      'users.email',
      'ON DUPLICATE KEY UPDATE',
    ],
    ['create view v as select email from users', 'users.email', 'the AS query'],
    ['create index i on users (ssn)', 'users.ssn', 'the definition'],
    ['alter table users add column g varchar(10) as (upper(email))', 'users.email', 'the definition'],
    ['create table t (x varchar(11), foreign key (x) references users (ssn))', 'users.ssn', 'the definition'],
  ])('%s', (sql, column, clause) => {
    const detail = refusal(sql);
    expect(detail).toContain(column);
    expect(detail).toContain(clause);
  });

  it('a table is not renamed: rules name tables', () => {
    for (const sql of [
      'rename table orders to orders_old, users to orders',
      'alter table users rename to orders',
      'alter table users rename orders',
      'alter table users rename as orders',
    ])
      expect(refusal(sql), sql).toMatch(/renaming a table is refused/);
    expect(rewrite('alter table users rename column name to n2')).toMatch(/^ALTER TABLE /);
  });

  it('a hashed column is not written: a written guess would match the stored hashes', () => {
    for (const sql of [
      "update users set ssn = '123-45-6789' where id = 100",
      'update users u join orders o on o.user_id = u.id set u.ssn = ?',
      'insert into users (id, ssn) values (100, ?)',
      'insert into users values (100, ?, ?, ?, ?)',
      'insert into users set id = 1, ssn = ?',
      "insert into users (id) values (1) on duplicate key update ssn = 'x'",
      "replace into users (id, ssn) values (9, '1')",
    ])
      expect(refusal(sql), sql).toMatch(/writes users\.ssn, which your data-protection policy shows hashed/);
    expect(refusal("insert into users_v (id, ssn) values (99, '123-45-6789')")).toMatch(
      /writes through the view users_v/,
    );
  });

  it('an alias that differs from another only in case is refused: the server setting decides which it names', () => {
    for (const sql of [
      'select (select S.ssn from (select 1 as ssn) s) as leaked from users S',
      'select S.email from (select 1 as email) s, users S',
    ])
      expect(refusal(sql), sql).toMatch(/differs only in case/);
    // One alias, written the same way each time, resolves as before.
    expect(rewrite('select u.name from users u')).toBe('SELECT `u`.`name` FROM `users` AS `u`');
  });

  it("a JOIN's ON sees the joined group and the outer queries, not the items before a comma", () => {
    const out = rewrite(
      "select id, (select count(*) from (select 1 as ssn) s, orders o1 join orders o2 on o1.id = o2.id and ssn like '98%') as c from users",
    );
    expect(out).toContain("MD5(CONCAT('salt:', `users`.`ssn`)) LIKE '98%'");
  });

  it('unknown statements, stored functions and crafted names fail closed', () => {
    expect(refusal("load data infile 'x' into table users")).toMatch(/refused/);
    expect(refusal('update orders set total = shop.f(1)')).toMatch(/stored function/);
    expect(refusal('update orders set total = sleep(1)')).toMatch(/sleep/i);
    expect(refusal('insert into users (`a b`) values (1)')).toMatch(/plain name/);
  });
});
