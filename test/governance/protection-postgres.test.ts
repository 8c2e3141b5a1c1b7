// Adversarial suite, PostgreSQL: every route to read or infer a protected value,
// planned as a member under a policy and run on the real server. Each query is either masked
// (it runs, and no protected value or telling fragment comes back) or refused with a clear error.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionConfigFor, poolVersion } from '../../governance/connections.ts';
import { describeProtection, planProtection } from '../../governance/protection/index.ts';
import { findCredential, findDatabase } from '../../store/databases.ts';
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
let admin: postgres.Sql;
const dbName = `prot_${newId('db').slice(-10).toLowerCase()}`;

beforeAll(async () => {
  const pg = servers().postgres;
  admin = postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.database,
    onnotice: () => {},
  });
  await admin.unsafe(`create database ${dbName}`);
  const target = postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: dbName,
    onnotice: () => {},
  });
  try {
    await target.unsafe(`
      create table users (id int primary key, email text not null, name text, ssn varchar(11), phone text, salary int);
      create table orders (id int primary key, user_id int references users(id), total numeric, note text);
      create view users_v as select * from users;
      create table users_kid () inherits (users);
      create function leak_emails() returns setof text language sql as 'select email from users';
      create procedure touch() language sql as 'select 1';`);
    for (const [i, email] of SECRETS.emails.entries()) {
      await target`insert into users values (${i + 1}, ${email}, ${`user${i + 1}`}, ${SECRETS.ssns[i]!}, ${SECRETS.phones[i]!}, ${SECRETS.salaries[i]!})`;
      await target`insert into orders values (${i + 1}, ${i + 1}, ${(i + 1) * 10}, ${'order'})`;
    }
    await target`analyze users`;
  } finally {
    await target.end();
  }
  fx = await startFixture({
    name: 'pg-protected',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: dbName,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    ],
  });
});
afterAll(async () => {
  await fx?.stop();
  await admin?.unsafe(`drop database if exists ${dbName} with (force)`);
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

/** Queries that must run with every protected value masked. */
const MASKED: Array<[string, string]> = [
  ['alias', 'select email as e from users'],
  ['quoted alias', 'select u.email as "x", u.ssn as "y" from users u'],
  ['lower()', 'select lower(email), upper(phone) from users'],
  ['concatenation', "select email || '', ssn || '-' || phone from users"],
  ['concat()', 'select concat(email, ssn, salary) from users'],
  ['substring', 'select substring(email from 1 for 12), left(ssn, 6) from users'],
  ['cast', 'select email::varchar, salary::text, ssn::text from users'],
  ['CASE', "select case when email like 'a%' then email else ssn end from users"],
  ['COALESCE', 'select coalesce(salary, 0), coalesce(email, name) from users'],
  ['select *', 'select * from users'],
  ['t.*', 'select u.* from users u'],
  ['TABLE', 'table users'],
  ['* over a join', 'select * from users join orders on orders.user_id = users.id'],
  [
    '* over JOIN USING a shown column',
    'select * from users u full join orders o using (id) join users u3 on u3.id = u.id',
  ],
  ['scalar subquery', 'select (select email from users order by id limit 1)'],
  ['derived table', 'select e from (select email as e from users) s'],
  ['derived *', 'select * from (select * from users) s'],
  ['LATERAL', 'select x.e from users, lateral (select users.email as e) x'],
  ['column aliases', 'select c from users as u(a, b, c)'],
  ['CTE', 'with c as (select * from users) select * from c'],
  [
    'recursive CTE',
    'with recursive r(n, e) as (select 1, email from users union all select n + 1, e from r where n < 2) select * from r',
  ],
  ['UNION', 'select name from users union all select email from users union all select ssn from users'],
  ['INTERSECT/EXCEPT', "select phone from users except select 'x'"],
  ['view (default deny)', 'select * from users_v'],
  ['row_to_json of a subquery', 'select row_to_json(s) from (select * from users) s'],
  ['json_build_object', "select json_build_object('e', email, 's', ssn, 'p', phone, 'm', salary) from users"],
  ['aggregates', "select string_agg(email, ','), jsonb_agg(ssn), max(phone), min(salary) from users"],
  ['ARRAY subquery', 'select array(select email from users)'],
  ['window', 'select id, first_value(email) over (order by id) from users'],
  ['aggregate ORDER BY', "select string_agg(name, ',' order by email) from users"],
  [
    'a subquery without LATERAL next to one with a column of the protected name',
    'select (select v from (select 1 as ssn) s, (select ssn as v) x) from users order by id',
  ],
  [
    'the same on the right of a JOIN',
    'select (select v from (select 1 as ssn) s join (select ssn as v) x on true) from users',
  ],
  [
    'alias.* of subqueries named like protected columns',
    'select id, (select array[ssn, email, phone, salary::text] from (select ssn.*, email.*, phone.*, salary.* from (select 1 as a) ssn, (select 1 as b) email, (select 1 as c) phone, (select 1 as d) salary) t) as v from users order by id',
  ],
];

/** Queries that must be refused. */
const REFUSED: Array<[string, string, RegExp]> = [
  ['row_to_json(t)', 'select row_to_json(u) from users u', /whole-row/],
  ['to_jsonb(t)', 'select to_jsonb(u) from users u', /whole-row/],
  ['whole row as a value', 'select u from users u', /whole-row/],
  ['t.* inside an expression', 'select json_agg(u.*) from users u', /whole-row/],
  ['field of a whole row', 'select (u).email from users u', /whole-row/],
  ['whole row cast to text', 'select u::text from users u', /whole-row/],
  ['pg_stats', "select most_common_vals::text from pg_stats where tablename = 'users'", /system catalog/],
  ['pg_catalog', 'select relname from pg_catalog.pg_class', /system catalog/],
  ['information_schema', 'select * from information_schema.columns', /system catalog/],
  ['COPY', 'copy users to stdout', /COPY is refused/],
  ['DO', 'do $$ begin perform 1; end $$', /DO is refused/],
  ['PREPARE', 'prepare p as select email from users', /PREPARE is refused/],
  ['EXECUTE', 'execute p', /EXECUTE is refused/],
  ['DECLARE CURSOR', 'declare c cursor for select email from users', /DECLARE CURSOR is refused/],
  ['FETCH', 'fetch all from c', /FETCH is refused/],
  ['CALL', 'call touch()', /CALL is refused/],
  [
    'dynamic SQL: query_to_xml',
    "select query_to_xml('select email from users', true, true, '')",
    /query_to_xml/,
  ],
  ['user function', 'select * from leak_emails()', /leak_emails/],
  ['user function in select list', 'select leak_emails()', /leak_emails/],
  ['EXPLAIN ANALYZE', "explain analyze select * from users where email = 'x'", /EXPLAIN is refused/],
  [
    'UPDATE ... RETURNING',
    "update users set name = name where email = 'x' returning id",
    /UPDATE reads the protected column users\.email in the WHERE clause/,
  ],
  ['two statements', 'select 1; select email from users', /one statement/],
  ['SELECT INTO', 'select email into stolen from users', /SELECT INTO/],
  ['NATURAL JOIN', 'select * from users natural join orders', /NATURAL/],
  [
    'JOIN USING a protected column',
    "select 1 from users join (select 'x'::text as email) g using (email)",
    /USING/,
  ],
  ['pg_sleep timing', "select case when email like 'a%' then pg_sleep(1) end from users", /pg_sleep/],
  ['system column', 'select ctid from users', /column "ctid" does not exist/],
  ['data-modifying CTE', 'with d as (delete from users returning email) select * from d', /data-modifying/],
  [
    'whole row in a CHECK (the failed cast would quote it)',
    'alter table users add constraint c check ((users)::text::int > 0)',
    /ALTER TABLE reads the protected column/,
  ],
  [
    'field of the whole row in a USING conversion',
    'alter table users alter column name type text using (users).email',
    /ALTER TABLE reads the protected column/,
  ],
  ['a protected table renamed onto a shown name', 'alter table users rename to orders', /renaming a table/],
  ['INHERIT', 'alter table users inherit orders', /INHERIT is refused/],
  ['a new child table', 'create table kid () inherits (users)', /inherits or is a partition is refused/],
  [
    'a guess written into a child table its parent reads',
    "insert into users_kid (id, email, ssn) values (97, 'x', '987-65-4321')",
    /of a partition or child table/,
  ],
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

describe("a JOIN's ON condition resolves as the server resolves it", () => {
  it('a name from a FROM item before the join is the outer protected column, masked: no value in the error', async () => {
    const a = await fx.attempt(
      'select (select count(*) from (select 1 as ssn) s, orders o1 join orders o2 on o1.id = o2.id and ssn::int = 1) from users',
    );
    expect('failed' in a ? a.failed : 'ran').toMatch(/invalid input syntax for type integer/);
    expectNoLeak(a);
  });
});

describe('refused: fails closed with a clear error', () => {
  it.each(REFUSED)('%s', async (_name, sql, message) => {
    const a = await fx.attempt(sql);
    expect('refused' in a ? a.refused : 'ran').toMatch(message);
  });
});

/** Inference: the answer must not depend on whether the guess is right. */
const INFERENCE: Array<[string, string, string, string]> = [
  ['WHERE equality', 'select count(*) from users where email = $1', SECRETS.emails[0]!, 'nobody@example.com'],
  ['WHERE LIKE prefix', 'select id from users where email like $1 order by id', 'alice%', 'zzz%'],
  [
    'WHERE on a hashed column',
    'select count(*) from users where ssn = md5($1)',
    SECRETS.ssns[0]!,
    '000-00-0000',
  ],
  ['WHERE on a hidden column', 'select count(*) from users where salary > $1::int', '100000', '999999'],
  [
    'WHERE on a partial column',
    'select count(*) from users where phone = $1',
    SECRETS.phones[0]!,
    '+1-000-0000',
  ],
  [
    'JOIN ON',
    'select count(*) from users join (select $1::text as g) g on users.email = g.g',
    SECRETS.emails[1]!,
    'x@y.z',
  ],
  ['EXISTS subquery', 'select exists(select 1 from users where ssn = $1)', SECRETS.ssns[1]!, '000-00-0000'],
  [
    'IN subquery',
    'select count(*) from orders where user_id in (select id from users where email = $1)',
    SECRETS.emails[2]!,
    'x@y.z',
  ],
  ['HAVING', 'select count(*) from users group by id having max(email) = $1', SECRETS.emails[0]!, 'x@y.z'],
  [
    'CASE in select list',
    "select case when email = $1 then 'yes' else 'no' end from users order by id",
    SECRETS.emails[0]!,
    'x@y.z',
  ],
  [
    'CTE filter',
    'with c as (select * from users) select count(*) from c where email = $1',
    SECRETS.emails[0]!,
    'x@y.z',
  ],
  ['view filter', 'select count(*) from users_v where email = $1', SECRETS.emails[0]!, 'x@y.z'],
  [
    'error on division',
    'select 1 / (case when email = $1 then 0 else 1 end) from users',
    SECRETS.emails[0]!,
    'x@y.z',
  ],
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

  it('a user policy wins over the role policy, and a policy with no rule hides everything', async () => {
    const res = await fx.svc.fetch(`/api/v1/desk/databases/${fx.databaseId}/policies`, {
      method: 'POST',
      headers: { 'x-api-key': fx.svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'only ids',
        rules: [{ table: 'users', column: 'id', action: 'show' }],
        assignments: { users: [(fx.member as { userId: string }).userId] },
      }),
    });
    expect(res.status).toBe(201);
    const rows = rowsOf(await fx.attempt('select id, name from users order by id'));
    expect(rows).toEqual([
      [1, null],
      [2, null],
      [3, null],
    ]);
    // Back to the role policy for the other tests.
    const { id } = (await res.json()) as { id: string };
    await fx.svc.fetch(`/api/v1/desk/databases/${fx.databaseId}/policies/${id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': fx.svc.apiKey },
    });
    expect(rowsOf(await fx.attempt('select name from users order by id'))[0]).toEqual(['user1']);
  });
});

describe('second line: result columns are redacted by their source', () => {
  it('a protected column that reaches the result unrewritten is redacted by its table and column', async () => {
    const sql = fx.svc.deps.sql;
    const db = (await findDatabase(
      sql,
      (
        await sql`select org_id from databases where id = ${fx.databaseId}`
      )[0]!.org_id,
      fx.databaseId,
    ))!;
    const cred = (await findCredential(
      sql,
      db.id,
      (
        await sql`select id from credentials where database_id = ${db.id}`
      )[0]!.id,
    ))!;
    const deps = { sql, pools: fx.pools, keyring: fx.svc.deps.keyring, logger: fx.svc.deps.logger };
    const plan = await planProtection(deps, {
      orgId: db.org_id,
      db,
      cred,
      actor: fx.member,
      statement: 'select 1',
      params: [],
    });
    // Run the raw statement, as if the rewriter had missed it: the server reports each field's source.
    const pool = fx.pools.acquire(
      { databaseId: db.id, credentialId: cred.id, version: poolVersion(db, cred) },
      () => connectionConfigFor(fx.svc.deps.keyring, db, cred),
    );
    const raw = await pool.execute('select id, email, salary, 1 + 1 as two from users order by id', [], {
      maxRows: 10,
      timeoutSeconds: 10,
    });
    expect(raw.rows[0]![1]).toBe(SECRETS.emails[0]);
    const redacted = plan.redact(raw);
    expect(redacted.rows).toEqual([
      [1, '****', null, 2],
      [2, '****', null, 2],
      [3, '****', null, 2],
    ]);
  });
});

describe('describeProtection (AI tool get_data_protection)', () => {
  it('lists what the policy does not show, and nothing for a user without a policy', async () => {
    const sql = fx.svc.deps.sql;
    const db = (await findDatabase(
      sql,
      (
        await sql`select org_id from databases where id = ${fx.databaseId}`
      )[0]!.org_id,
      fx.databaseId,
    ))!;
    const cred = (await findCredential(
      sql,
      db.id,
      (
        await sql`select id from credentials where database_id = ${db.id}`
      )[0]!.id,
    ))!;
    const deps = { sql, pools: fx.pools, keyring: fx.svc.deps.keyring, logger: fx.svc.deps.logger };
    const d = await describeProtection(deps, { orgId: db.org_id, db, cred, actor: fx.member });
    expect(d.policy?.name).toBe('pii');
    const users = d.columns.filter((c) => c.table === 'users').map((c) => [c.column, c.action]);
    expect(users).toEqual([
      ['email', 'mask'],
      ['ssn', 'hash'],
      ['phone', 'partial'],
      ['salary', 'hide'],
    ]);
    expect(d.columns.some((c) => c.table === 'users_v' && c.column === 'email' && c.action === 'hide')).toBe(
      true,
    );
    expect(
      (await describeProtection(deps, { orgId: db.org_id, db, cred, actor: fx.unprotected })).policy,
    ).toBeNull();
  });
});
