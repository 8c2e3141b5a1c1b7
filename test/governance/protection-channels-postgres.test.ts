// Adversarial suite, part 2, PostgreSQL: names, error channels, timing and the
// functions that are now allowed because they only see masked values. Every outcome is checked
// for protected values and for the policy's salt in rows, column names, messages and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoLeak, observable, rowsOf, SECRETS } from './protection-fixture.ts';
import { startPostgresTarget, type Target } from './protection-targets.ts';

let t: Target;
beforeAll(async () => {
  t = await startPostgresTarget();
});
afterAll(async () => t?.stop());

const attempt = async (sql: string, params: string[] = []) => {
  const a = await t.fx.attempt(sql, params);
  expectNoLeak(a, t.fx.salt);
  return a;
};

describe('names: a rewritten column keeps the name the server gives the query as written', () => {
  it.each([
    ['select lower(ssn) from users', ['lower']],
    ['select ssn::varchar from users', ['ssn']],
    ["select ssn || 'x', md5(ssn) from users", ['?column?', 'md5']],
    ['select case when id = 1 then ssn else email end from users', ['email']],
    ['select (select ssn from users order by id limit 1)', ['ssn']],
    ['select * from (select lower(email), upper(phone) from users) s', ['lower', 'upper']],
    ["select coalesce(email, 'x')::text, greatest(ssn, phone) from users", ['coalesce', 'greatest']],
    ['select email from users union all select ssn from users', ['email']],
  ])('%s', async (sql, columns) => {
    const a = await attempt(sql);
    expect('columns' in a ? a.columns : a).toEqual(columns);
    // The same names the server gives the statement as written, run without a policy.
    const plain = await t.fx.attempt(sql, [], t.fx.unprotected);
    expect('columns' in plain ? plain.columns : plain).toEqual(columns);
  });
});

describe('printing: a name cannot turn into SQL of its own in the printed statement', () => {
  it.each([
    // The printer writes CTE and window names bare: a comment opened in one and closed in an
    // alias would leave `SELECT email FROM users` for the server to run unmasked.
    [
      'CTE name',
      // An expression, so the second line (redaction by source) could not catch it either.
      'with "x AS (SELECT lower(email) AS e FROM users) SELECT * FROM x /*" as (select 1) select 1 as "*/ --"',
    ],
    ['window name', 'select count(*) over "w AS (), email" from users window "w AS (), email" as ()'],
  ])('%s', async (_name, sql) => {
    const a = await attempt(sql);
    expect('refused' in a ? a.refused : a).toMatch(/printed back unchanged/);
  });
});

describe('error channels: what the server says never carries a value or the salt', () => {
  it.each([
    ['division by zero on a hashed length', 'select 1 / (length(ssn) - 32) from users', /division by zero/],
    // A hash that starts with ten or more digits overflows before its first letter is read.
    [
      'cast of a hash',
      'select ssn::int from users',
      /invalid input syntax for type integer|out of range for type integer/,
    ],
    ['cast of a mask', 'select email::int from users', /invalid input syntax for type integer: "\*\*\*\*"/],
    ['cast of a partial value', 'select phone::numeric from users', /invalid input syntax for type numeric/],
    ['integer overflow', 'select length(ssn) * 2147483647 from users', /integer out of range/],
    ['date parsing', "select to_date(email, 'YYYY-MM-DD') from users", /invalid value|out of range/],
    ['jsonpath from a value', "select jsonb_path_query('{}', ssn::jsonpath) from users", /jsonpath|syntax/],
    ['regular expression from a value', "select 'x' ~ phone from users", /regular expression/],
    ['json from a value', 'select email::json from users', /invalid input syntax for type json/],
  ])('%s', async (_name, sql, message) => {
    const a = await attempt(sql);
    expect('failed' in a ? a.failed : JSON.stringify(a)).toMatch(message);
  });

  it('an unknown column answers as Postgres does, without naming data protection', async () => {
    const a = await attempt('select emial from users');
    expect('refused' in a ? a.refused : a).toBe('column "emial" does not exist');
  });

  it('an unknown function answers as the server would', async () => {
    const a = await attempt('select lowr(name) from users');
    expect('refused' in a ? a.refused : a).toMatch(/^function lowr\(\) does not exist$/);
  });
});

describe('refused: functions that reach data, time or settings by themselves', () => {
  it.each([
    ['pg_sleep', 'select pg_sleep(0.01)', /timing/],
    ['pg_sleep_for', "select case when ssn like '1%' then pg_sleep_for('1 second') end from users", /timing/],
    ['current_setting', "select current_setting('data_directory')", /settings/],
    ['set_config', "select set_config('search_path', 'x', false)", /settings/],
    ['pg_read_file', "select pg_read_file('/etc/passwd')", /files/],
    ['lo_get', 'select lo_get(1)', /large objects/],
    ['ts_stat runs SQL', "select * from ts_stat('select to_tsvector(email) from users')", /runs SQL/],
    ['table_to_xml', "select table_to_xml('users', true, false, '')", /runs SQL/],
    ['nextval', "select nextval('s')", /side effects/],
    ['qualified user function', 'select public.leak_emails()', /user-defined/],
    ['user function shadowing a built-in name', 'select initcap(1)', /user-defined/],
    ['catalog function', "select pg_get_viewdef('users')", /catalog/],
    ['privilege probe', "select has_table_privilege('users', 'select')", /catalog/],
  ])('%s', async (_name, sql, message) => {
    const a = await attempt(sql);
    expect('refused' in a ? a.refused : 'ran').toMatch(message);
  });
});

describe('allowed built-ins see only the mask: a right and a wrong guess answer alike', () => {
  const pairs: Array<[string, string, string, string]> = [
    ['SIMILAR TO', 'select count(*) from users where email similar to $1', '%secret%', '%zzz%'],
    ['^@ (starts with)', 'select count(*) from users where email ^@ $1', 'alice', 'zzz'],
    [
      'to_tsvector @@',
      'select count(*) from users where to_tsvector(email) @@ to_tsquery($1)',
      'alice',
      'zzz',
    ],
    [
      'overlay',
      'select count(*) from users where overlay(email placing $1 from 1 for 5) = email',
      'alice',
      'zzzzz',
    ],
    [
      'encode(convert_to)',
      "select count(*) from users where encode(convert_to(email, 'UTF8'), 'escape') = $1",
      SECRETS.emails[0]!,
      'x',
    ],
    // Guesses with a '-': a hashed ssn is hex, so neither can occur in it by chance (a bare '123'
    // does, in about one salt in fifty), while the clear value would contain the right one.
    ['strpos', 'select sum(strpos(ssn, $1)) from users', '123-45', '999-99'],
    [
      'length of a partial value',
      'select count(*) from users where length(phone) = length($1)',
      SECRETS.phones[0]!,
      'x',
    ],
  ];
  it.each(pairs)('%s', async (_name, sql, right, wrong) => {
    const a = await attempt(sql, [right]);
    const b = await attempt(sql, [wrong]);
    expect('refused' in a ? a.refused : null).toBeNull();
    expect(observable(a)).toEqual(observable(b));
  });

  it.each([
    ['xmlagg', 'select xmlagg(xmlelement(name e, email)) from users'],
    ['pg_typeof', 'select pg_typeof(ssn), pg_typeof(salary) from users'],
    [
      'string_to_array / array_to_string',
      "select array_to_string(string_to_array(email, '.'), '|') from users",
    ],
    ['format', "select format('%s-%s', email, ssn) from users"],
    ['regexp_replace', "select regexp_replace(phone, '\\d', 'x', 'g') from users"],
  ])('%s runs masked', async (_name, sql) => {
    expect(rowsOf(await attempt(sql)).length).toBeGreaterThan(0);
  });

  it('timing: a query over a masked column takes the same time whatever it guesses', async () => {
    // The only clock a member has is the query's duration; with the value replaced by its mask
    // the work done cannot depend on it, so both guesses return identical results.
    const sql = 'select count(*) from generate_series(1, 20000) g, users where email = $1 or g < 0';
    const a = await attempt(sql, [SECRETS.emails[0]!]);
    const b = await attempt(sql, ['nobody@example.com']);
    expect(observable(a)).toEqual(observable(b));
  });
});
