// Adversarial suite, MariaDB: the same routes as the Postgres suite in MySQL's
// dialect, planned as a member under a policy and run on the real server.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../store/ids.ts';
import { servers } from '../harness/servers.ts';
import {
  expectNoLeak,
  observable,
  type ProtectionFixture,
  rowsOf,
  SECRETS,
  startFixture,
} from './protection-fixture.ts';

let fx: ProtectionFixture;
let admin: mysql.Connection;
const dbName = `prot_${newId('db').slice(-10).toLowerCase()}`;

beforeAll(async () => {
  const my = servers().mariadb;
  admin = await mysql.createConnection({
    host: my.host,
    port: my.port,
    user: my.user,
    password: my.password,
    multipleStatements: true,
  });
  await admin.query(`create database ${dbName}`);
  await admin.query(`use ${dbName}`);
  await admin.query(`
    create table users (id int primary key, email varchar(200) not null, name varchar(50), ssn varchar(11), phone varchar(20), salary int);
    create table orders (id int primary key, user_id int, total decimal(10,2), note varchar(20));
    create view users_v as select * from users;
    create function leak_email() returns varchar(200) reads sql data return (select email from users limit 1);
    create procedure dump_users() select * from users;`);
  for (const [i, email] of SECRETS.emails.entries()) {
    await admin.execute('insert into users values (?, ?, ?, ?, ?, ?)', [
      i + 1,
      email,
      `user${i + 1}`,
      SECRETS.ssns[i]!,
      SECRETS.phones[i]!,
      SECRETS.salaries[i]!,
    ]);
    await admin.execute('insert into orders values (?, ?, ?, ?)', [i + 1, i + 1, (i + 1) * 10, 'order']);
  }
  fx = await startFixture({
    name: 'maria-protected',
    adapter: 'mysql',
    hostname: my.host,
    port: my.port,
    database: dbName,
    credentials: [
      { username: my.user, password: my.password, reviews_required: 0, default_credential: true },
    ],
  });
});
afterAll(async () => {
  await fx?.stop();
  await admin?.query(`drop database if exists ${dbName}`);
  await admin?.end();
});

describe('control: without a policy the same queries do read the values', () => {
  it('an admin with no policy reads emails in clear (the leak check can fail)', async () => {
    const a = await fx.attempt('select email from users order by id', [], fx.unprotected);
    expect(rowsOf(a).map((r) => r[0])).toEqual(SECRETS.emails);
    expect(() => expectNoLeak(a)).toThrow(/leaks/);
  });
});

describe('rule kinds', () => {
  it('show, mask, hash (salted), partial and hide (default deny) per column', async () => {
    const a = await fx.attempt('select id, name, email, ssn, phone, salary from users order by id');
    const rows = rowsOf(a);
    expect(rows.map((r) => r[0])).toEqual([1, 2, 3]);
    expect(rows.map((r) => r[1])).toEqual(['user1', 'user2', 'user3']);
    expect(rows.every((r) => r[2] === '****')).toBe(true);
    expect(rows.every((r) => typeof r[3] === 'string' && /^[0-9a-f]{32}$/.test(r[3] as string))).toBe(true);
    expect(rows.map((r) => r[4])).toEqual(['****01', '****02', '****03']);
    expect(rows.every((r) => r[5] === null)).toBe(true);
    expectNoLeak(a);
  });
});

const MASKED: Array<[string, string]> = [
  ['alias', 'select email as e from users'],
  ['backquoted alias', 'select u.`email` as `x`, u.ssn as y from users u'],
  ['lower()', 'select lower(email), upper(phone) from users'],
  ['concat()', "select concat(email, ''), concat_ws('-', ssn, phone, salary) from users"],
  ['substring', "select substring(email, 1, 12), left(ssn, 6), substring_index(email, '@', 1) from users"],
  ['cast', 'select cast(email as char), cast(salary as char), convert(ssn, char) from users'],
  [
    'CASE / IF',
    "select case when email like 'a%' then email else ssn end, if(salary > 0, salary, phone) from users",
  ],
  ['IFNULL / COALESCE', 'select ifnull(salary, 0), coalesce(email, name) from users'],
  ['select *', 'select * from users'],
  ['t.*', 'select u.* from users u'],
  ['* over a join', 'select * from users join orders on orders.user_id = users.id'],
  ['db-qualified', `select ${'`'}users${'`'}.email from users`],
  ['scalar subquery', 'select (select email from users order by id limit 1)'],
  ['derived table', 'select e from (select email as e from users) s'],
  ['derived *', 'select * from (select * from users) s'],
  ['CTE', 'with c as (select * from users) select * from c'],
  [
    'recursive CTE',
    'with recursive r (n, e) as (select 1, email from users union all select n + 1, e from r where n < 2) select * from r',
  ],
  ['UNION', 'select name from users union all select email from users union all select ssn from users'],
  ['parenthesized UNION', '(select email from users) union (select ssn from users)'],
  ['view (default deny)', 'select * from users_v'],
  [
    "a JOIN's ON naming a FROM item before the comma (the outer users.ssn, masked)",
    "select id, (select count(*) from (select 1 as ssn) s, orders o1 join orders o2 on o1.id = o2.id and ssn like '98%') as c from users",
  ],
  ['JSON_OBJECT', "select json_object('e', email, 's', ssn, 'p', phone, 'm', salary) from users"],
  ['JSON_ARRAYAGG', 'select json_arrayagg(email), json_arrayagg(ssn) from users'],
  ['GROUP_CONCAT', "select group_concat(email separator ','), max(phone), min(salary) from users"],
  ['user variable', 'select @stolen := email from users'],
  ['window', 'select id, first_value(email) over (order by id) from users'],
  ['hex()', 'select hex(email), md5(ssn), sha2(phone, 256) from users'],
];

const REFUSED: Array<[string, string, RegExp]> = [
  ['information_schema', 'select * from information_schema.columns', /system schema/],
  ['mysql.user', 'select user, password from mysql.user', /system schema/],
  ['performance_schema', 'select * from performance_schema.events_statements_history', /system schema/],
  ['unqualified catalog', 'select * from COLUMNS', /Table '.*\.COLUMNS' doesn't exist/],
  ['other database', 'select * from mysql.db', /system schema/],
  ['HANDLER', 'handler users open', /HANDLER is refused/],
  ['PREPARE', "prepare s from 'select email from users'", /PREPARE is refused/],
  ['EXECUTE', 'execute s', /EXECUTE is refused/],
  ['DO', 'do (select email from users limit 1)', /DO is refused/],
  ['CALL', 'call dump_users()', /CALL is refused/],
  ['LOAD DATA', "load data infile '/etc/passwd' into table users", /LOAD is refused/],
  ['INTO OUTFILE', "select * from users into outfile '/tmp/leak'", /INTO is refused/],
  ['INTO @var', 'select email into @x from users limit 1', /INTO is refused/],
  ['SET from a subquery', 'set @x = (select email from users limit 1)', /SET is refused/],
  ['SHOW', 'show create table users', /SHOW is refused/],
  ['EXPLAIN', "explain select * from users where email = 'x'", /EXPLAIN is refused/],
  [
    'UPDATE',
    "update users set name = name where email = 'x'",
    /UPDATE reads the protected column users\.email in the WHERE clause/,
  ],
  ['two statements', 'select 1; select email from users', /one statement/],
  ['user function', 'select leak_email()', /leak_email/],
  ['LOAD_FILE', "select load_file('/etc/passwd')", /load_file/],
  ['SLEEP timing', "select if(email like 'a%', sleep(1), 0) from users", /sleep/],
  ['BENCHMARK timing', 'select benchmark(1000000, md5(email)) from users', /benchmark/],
  [
    'JOIN USING a protected column',
    "select 1 from users join (select 'x' as email) g using (email)",
    /USING/,
  ],
  ['NATURAL JOIN', 'select * from users natural join orders', /could not be analyzed/],
  [
    'a protected table renamed onto a shown name',
    'rename table orders to orders_old, users to orders',
    /renaming a table is refused/,
  ],
  ['ALTER TABLE … RENAME', 'alter table users rename to orders', /renaming a table is refused/],
  [
    'a guess written through a view',
    "insert into users_v (id, email, name, ssn) values (99, 'x', 'p', '123-45-6789')",
    /writes through the view users_v/,
  ],
  [
    'a guess written into a hashed column',
    "update users set ssn = '123-45-6789' where id = 1",
    /UPDATE writes users\.ssn, which your data-protection policy shows hashed/,
  ],
];

describe('masked: runs, no protected value comes back', () => {
  it.each(MASKED)('%s', async (_name, sql) => {
    const a = await fx.attempt(sql);
    expect('refused' in a ? a.refused : null).toBeNull();
    expect(rowsOf(a).length).toBeGreaterThan(0);
    expectNoLeak(a);
  });
});

describe('refused: fails closed with a clear error', () => {
  it.each(REFUSED)('%s', async (_name, sql, message) => {
    const a = await fx.attempt(sql);
    expect('refused' in a ? a.refused : 'ran').toMatch(message);
  });
});

const INFERENCE: Array<[string, string, string, string]> = [
  ['WHERE equality', 'select count(*) from users where email = ?', SECRETS.emails[0]!, 'nobody@example.com'],
  ['WHERE LIKE prefix', 'select id from users where email like ? order by id', 'alice%', 'zzz%'],
  ['WHERE REGEXP_SUBSTR', "select count(*) from users where regexp_substr(email, ?) <> ''", '^alice', '^zzz'],
  [
    'WHERE on a hashed column',
    'select count(*) from users where ssn = md5(?)',
    SECRETS.ssns[0]!,
    '000-00-0000',
  ],
  ['WHERE on a hidden column', 'select count(*) from users where salary > ?', '100000', '999999'],
  [
    'JOIN ON',
    'select count(*) from users join (select ? as g) g on users.email = g.g',
    SECRETS.emails[1]!,
    'x@y.z',
  ],
  ['EXISTS subquery', 'select exists(select 1 from users where ssn = ?)', SECRETS.ssns[1]!, '000-00-0000'],
  [
    'IN subquery',
    'select count(*) from orders where user_id in (select id from users where email = ?)',
    SECRETS.emails[2]!,
    'x@y.z',
  ],
  ['HAVING', 'select count(*) from users group by id having max(email) = ?', SECRETS.emails[0]!, 'x@y.z'],
  [
    'CASE in select list',
    "select case when email = ? then 'yes' else 'no' end from users order by id",
    SECRETS.emails[0]!,
    'x@y.z',
  ],
  [
    'CTE filter',
    'with c as (select * from users) select count(*) from c where email = ?',
    SECRETS.emails[0]!,
    'x@y.z',
  ],
  ['view filter', 'select count(*) from users_v where email = ?', SECRETS.emails[0]!, 'x@y.z'],
];

describe('inference: guessing through WHERE, JOIN, HAVING, CASE learns nothing', () => {
  it.each(INFERENCE)('%s', async (_name, sql, right, wrong) => {
    const a = await fx.attempt(sql, [right]);
    const b = await fx.attempt(sql, [wrong]);
    expect('refused' in a ? a.refused : null).toBeNull();
    expect(observable(a)).toEqual(observable(b));
    expectNoLeak(a);
  });

  it('ORDER BY a protected column does not order by its value', async () => {
    const asc = rowsOf(await fx.attempt('select id from users order by email asc, id'));
    const desc = rowsOf(await fx.attempt('select id from users order by email desc, id'));
    expect(asc).toEqual(desc);
  });

  it('GROUP BY and DISTINCT on a masked column collapse to one group', async () => {
    expect(rowsOf(await fx.attempt('select count(*) from users group by email'))).toEqual([['3']]);
    expect(rowsOf(await fx.attempt('select count(distinct email) from users'))).toEqual([['1']]);
  });
});
