import { describe, expect, it } from 'vitest';
import { testRules, testSchema } from '../../test/fixtures/protection-schema.ts';
import { rewritePostgres } from './postgres.ts';
import { ProtectionParseError, ProtectionRefusedError, ServerStyleError } from './rules.ts';

const schema = testSchema('public', false);
const rules = testRules(false);
const rewrite = (sql: string) => rewritePostgres(sql, schema, rules);
const flat = async (sql: string) => (await rewrite(sql)).replace(/\s+/g, ' ').trim();

describe('Postgres rewriter: protected references are replaced wherever they appear', () => {
  it('select list keeps the column name; WHERE, ORDER BY, GROUP BY see only the mask', async () => {
    expect(await flat("select email from users where email like 'a%' group by email order by email")).toBe(
      "SELECT '****'::text AS email FROM users WHERE '****'::text LIKE 'a%' GROUP BY '****'::text ORDER BY email",
    );
  });

  it('an alias does not escape the rule, and shown columns stay untouched', async () => {
    expect(await flat('select u.email as e, u.name from users u')).toBe(
      "SELECT '****'::text AS e, u.name FROM users AS u",
    );
  });

  it('hash is salted md5, partial keeps the configured tail, a column without a rule is a typed NULL', async () => {
    const out = await flat('select ssn, phone from users');
    expect(out).toContain("md5('salt:' || users.ssn::text) AS ssn");
    expect(out).toContain('"right"(users.phone::text, 2)');
    const hidden = await flat('select id from users u(id, e, n, s, p) where s is null');
    expect(hidden).toContain("md5('salt:' || u.s::text) IS NULL");
  });

  it('* is expanded from the schema; a subquery keeps its own alias.*', async () => {
    const out = await flat('select * from users, (select 1 as one) s');
    expect(out).toMatch(/^SELECT users\.id AS id, '\*\*\*\*'::text AS email, .* s\.\* FROM users/);
  });

  it('subqueries, CTEs and set operations are rewritten at every level', async () => {
    const out = await flat(
      'with c as (select email from users) select * from c union select (select ssn from users limit 1)',
    );
    expect(out).not.toContain('users.email');
    expect(out).toContain("'****'::text AS email");
    expect(out).toContain("md5('salt:' || users.ssn::text)");
  });

  it('without a protected column the statement is printed back equivalent', async () => {
    expect(await flat('select id, name from users where id = $1')).toBe(
      'SELECT id, name FROM users WHERE id = $1',
    );
  });
});

describe('Postgres rewriter: a rewritten target keeps the name the server gives it as written', () => {
  it.each([
    ['select lower(email) from users', "lower('****'::text) AS lower"],
    ['select email::varchar from users', 'AS email'],
    ['select ssn || phone from users', 'AS "?column?"'],
    ["select case when id = 1 then 'a' else email end from users", 'AS email'],
    ["select coalesce(email, 'x')::text from users", 'AS text'],
    ['select (select ssn from users limit 1)', 'AS ssn'],
  ])('%s', async (sql, alias) => {
    const out = await flat(sql);
    expect(out).toContain(alias);
    expect(out).toMatch(/^SELECT .* AS ("[^"]+"|\w+)( FROM|$)/);
  });

  it('a target without a protected column is printed without a new alias', async () => {
    expect(await flat('select lower(name) from users')).toBe('SELECT lower(name) FROM users');
  });
});

describe('Postgres rewriter: a subquery claims only the columns the server gives it', () => {
  // `alias.*` of a subquery is that subquery's columns, never a column named after the alias:
  // a reference to `ssn` below must fall through to the outer users.ssn, and be masked there.
  it.each([
    'select id, (select ssn from (select ssn.* from (select 1 as a) ssn) t) as v from users',
    'select id, (select ssn from (select * from (select 1 as a) ssn) t) from users',
    'with c as (select ssn.* from (select 1 as a) ssn) select (select ssn from c) from users',
    'select id, (select ssn from (select (ssn).* from (select row(1) as ssn) x) t) from users',
    'select id, (select array[ssn, email] from (select ssn.*, email.* from (select 1 as a) ssn, (select 1 as b) email) t) from users',
  ])('%s', async (sql) => {
    const out = await flat(sql);
    expect(out).toContain("md5('salt:' || users.ssn::text)");
    // The bare reference, left as written, would be the clear value.
    expect(out).not.toMatch(/(SELECT |ARRAY\[)ssn[ ,\]]/);
  });

  it('a subquery without LATERAL resolves past the FROM items before it, as the server does', async () => {
    // The server skips the sibling `s` (it is not LATERAL) and reads the outer users.ssn.
    for (const sql of [
      'select (select v from (select 1 as ssn) s, (select ssn as v) x) from users',
      'select (select v from (select 1 as ssn) s join (select ssn as v) x on true) from users',
      'select (select v from (select 1 as ssn) u, (select u.ssn as v) x) from users u',
    ])
      expect(await flat(sql), sql).toContain("md5('salt:' || ");
    await expect(
      rewrite(
        'select (select v from (select 1 as a) users, (select row_to_json(users)::text as v) x) from users',
      ),
    ).rejects.toThrow(/whole-row/);
    // LATERAL does see them.
    expect(await flat('select x.e from users u, lateral (select u.email as e) x')).toContain(
      "'****'::text AS e",
    );
  });

  it('ORDER BY, LIMIT and OFFSET of a VALUES list are rewritten like any other clause', async () => {
    for (const sql of [
      "values (1) limit (select case when ssn like '1%' then 1 else 0 end from users where id = 1)",
      'select (values (1) order by (select ssn::int from users where id = 1))',
      "with c as (values (1) offset (select count(*) from users where ssn like '1%')) select * from c",
      'insert into orders (id) values (1) limit (select length(email) from users limit 1)',
    ])
      expect(await flat(sql).catch((e: Error) => e.message), sql).toMatch(
        /md5\('salt:' \|\| users\.ssn::text\)|reads the protected column/,
      );
    expect(await flat('values (2), (1) order by column1 limit 1')).toBe(
      'VALUES (2), (1) ORDER BY column1 LIMIT 1',
    );
  });

  it("a JOIN's ON sees its two sides and the outer queries, not the FROM items before the join", async () => {
    const sql =
      'select (select count(*) from (select 1 as ssn) s, orders o1 join orders o2 on o1.id = o2.id and ssn::int = 1) from users';
    expect(await flat(sql)).toContain("(md5('salt:' || users.ssn::text))::int = 1");
  });

  it('ORDER BY and DISTINCT ON a name that is no output are masked inputs', async () => {
    expect(await flat('select ssn.*, users.id from (select 1 as a) ssn, users order by ssn')).toMatch(
      /ORDER BY md5\('salt:' \|\| users\.ssn::text\)$/,
    );
    expect(
      await flat('select distinct on (email) email.*, users.id from (select 1 as a) email, users'),
    ).toMatch(/^SELECT DISTINCT ON \('\*\*\*\*'::text\)/);
    // A named output is still sorted on as written.
    expect(await flat('select t.*, 1 as y from (select 1 as a) t order by y, a')).toMatch(/ORDER BY y, a$/);
  });
});

describe('Postgres rewriter: what cannot be proven safe is refused', () => {
  it.each([
    ['select row_to_json(u) from users u', /whole-row/],
    ['select * from pg_stats', /system catalog/],
    ['copy users to stdout', /COPY is refused/],
    ["select lo_import('/etc/passwd')", /lo_import/],
    ['select 1 operator(public.===) 2', /operator/],
    ['select id from users order by id using ===', /operator === is user-defined/],
    ['select 1; select 2', /one statement/],
  ])('%s', async (sql, message) => {
    await expect(rewrite(sql)).rejects.toThrow(message);
    await expect(rewrite(sql)).rejects.toBeInstanceOf(ProtectionRefusedError);
  });

  it.each([
    ['select * from nowhere', 'relation "nowhere" does not exist'],
    ['select emial from users', 'column "emial" does not exist'],
    ['select u.emial from users u', 'column u.emial does not exist'],
    ['select x.id from users', 'missing FROM-clause entry for table "x"'],
  ])('%s answers as the server would, without naming data protection', async (sql, message) => {
    const err = await rewrite(sql).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStyleError);
    expect((err as ServerStyleError).detail).toBe(message);
  });

  it('a syntax error is a 422 naming the parser message', async () => {
    const err = await rewrite('select from from').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtectionParseError);
    expect((err as ProtectionParseError).status).toBe(422);
  });
});
