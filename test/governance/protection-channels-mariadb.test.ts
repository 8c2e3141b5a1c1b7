// Adversarial suite, part 2, MariaDB: MariaDB names a column after the expression's
// text, and quotes expressions in its errors, so the rewritten SQL (and the salt of `hash`) was
// one column name or error away. Every outcome is checked for protected values and for the
// policy's salt in rows, column names, warnings and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoLeak, observable, rowsOf, SECRETS } from './protection-fixture.ts';
import { startMariadbTarget, type Target } from './protection-targets.ts';

let t: Target;
beforeAll(async () => {
  t = await startMariadbTarget();
});
afterAll(async () => t?.stop());

const attempt = async (sql: string, params: string[] = []) => {
  const a = await t.fx.attempt(sql, params);
  expectNoLeak(a, t.fx.salt);
  return a;
};

describe('names: a column is named after the text as written, never the rewritten one', () => {
  it.each([
    ['select lower(ssn) from users', ['lower(ssn)']],
    ['select group_concat(name) from users', ['group_concat(name)']],
    ["select concat(ssn, ''), ssn from users", ["concat(ssn, '')", 'ssn']],
    ['select u.ssn, UPPER( email ) from users u', ['ssn', 'UPPER( email )']],
    ['select * from (select lower(ssn) from users) s', ['lower(ssn)']],
    ['select (select ssn from users order by id limit 1)', ['(select ssn from users order by id limit 1)']],
    ['select convert(ssn using utf8mb4) from users', ['convert(ssn using utf8mb4)']],
    ["select 'abc', 1+1, md5(`ssn`) from users", ['abc', '1+1', 'md5(`ssn`)']],
  ])('%s', async (sql, columns) => {
    const a = await attempt(sql);
    expect('columns' in a ? a.columns : a).toEqual(columns);
    // The same names the server gives the statement as written, run without a policy.
    const plain = await t.fx.attempt(sql, [], t.fx.unprotected);
    expect('columns' in plain ? plain.columns : plain).toEqual(columns);
  });

  it('an alias written as a string with backquotes cannot end the name and add a column', async () => {
    // sqlify prints the alias between backquotes as it is: `a`, email, `id` would be three items.
    const a = await attempt("select 1 as 'a`, email, `id' from users");
    expect('refused' in a ? a.refused : a).toMatch(/backquote/);
  });

  it('a collation name cannot carry a column past the rewrite', async () => {
    // sqlify prints a collation bare: COLLATE latin1_bin, email would add an unmasked column.
    const a = await attempt('select convert(name using latin1) collate `latin1_bin, email` from users');
    expect('refused' in a ? a.refused : a).toMatch(/plain name/);
  });
});

describe('error channels: what the server says never carries a value or the salt', () => {
  it.each([
    ['unsigned overflow over a hash', 'select ~0 + length(ssn) from users', /out of range in an expression/],
    [
      'double overflow over a hash',
      'select exp(length(ssn) * 100) from users',
      /out of range in an expression/,
    ],
    [
      'cast of a hash to unsigned, then overflow',
      'select cast(ssn as unsigned) + ~0 from users',
      // A hash that starts with a digit casts to a number and overflows; one that starts with a
      // letter casts to 0. The salt is random per run, so when every row's hash starts with a
      // letter (about one run in twenty) the answer is ~0 in every row, and nothing else.
      /out of range|"rows":\[\["18446744073709551615"\](,\["18446744073709551615"\])*\],/,
    ],
    ['JSON parse of a value', "select json_extract(ssn, '$.a') is null from users", /JSON|"rows":\[\[1\]/],
    ['XPath error quoting a value', "select extractvalue(1, concat('~', email)) from users", /XPATH/],
    ['updatexml quoting a hash', "select updatexml(1, concat('~', ssn), 1) from users", /XPATH/],
  ])('%s', async (_name, sql, message) => {
    const a = await attempt(sql);
    expect('failed' in a ? a.failed : JSON.stringify(a)).toMatch(message);
    if ('failed' in a) expect(a.failed).not.toMatch(/md5|concat\(/i);
  });

  it('division by zero and truncating casts warn about the mask only', async () => {
    const a = await attempt(
      'select length(ssn) / 0, cast(email as signed), cast(phone as decimal) from users',
    );
    expect(rowsOf(a)[0]![0]).toBeNull();
    expect('messages' in a ? a.messages.join('\n') : '').not.toMatch(/md5|concat/i);
  });

  it('an unknown column answers as MariaDB does, without naming data protection', async () => {
    const a = await attempt('select emial from users');
    expect('refused' in a ? a.refused : a).toBe("Unknown column 'emial' in 'field list'");
    const b = await attempt('select id from users order by emial');
    expect('refused' in b ? b.refused : b).toBe("Unknown column 'emial' in 'order clause'");
  });

  it('an unknown function answers as MariaDB does', async () => {
    const a = await attempt('select lowr(name) from users');
    expect('refused' in a ? a.refused : a).toBe(`FUNCTION ${t.dbName}.lowr does not exist`);
  });

  it('a construct the analyzer cannot read is named in words, not as a parser dump', async () => {
    const a = await attempt('select id from users where id = 1 lock in share mode nowait foo');
    expect('refused' in a ? a.refused : a).not.toMatch(/Expected "/);
  });
});

describe('refused: functions and settings that reach data or time by themselves', () => {
  it.each([
    ['SLEEP', 'select sleep(0.01)', /timing/],
    ['BENCHMARK', 'select benchmark(10, md5(ssn)) from users', /timing/],
    ['GET_LOCK', "select get_lock('x', 1)", /timing/],
    ['qualified stored function', () => `select ${t.dbName}.leak_email()`, /stored function/],
    ['server setting', 'select @@datadir', /setting/],
    ['NEXTVAL', 'select nextval(s)', /side effects/],
  ])('%s', async (_name, sql, message) => {
    const a = await attempt(typeof sql === 'function' ? sql() : sql);
    expect('refused' in a ? a.refused : 'ran').toMatch(message);
  });
});

describe('allowed built-ins see only the mask: a right and a wrong guess answer alike', () => {
  const pairs: Array<[string, string, string, string]> = [
    ['SOUNDS LIKE', 'select count(*) from users where email sounds like ?', SECRETS.emails[0]!, 'zzz'],
    [
      '= ANY (SELECT …)',
      'select count(*) from users where email = any (select ? from orders)',
      SECRETS.emails[0]!,
      'x',
    ],
    [
      'FIND_IN_SET',
      "select count(*) from users where find_in_set(?, replace(email, '@', ',')) > 0",
      'alice.secret',
      'zzz',
    ],
    // With the '-' neither guess can match a hashed (hex) ssn by chance; the clear one would match.
    ['MID', 'select count(*) from users where mid(ssn, 1, 4) = ?', '123-', '999-'],
    [
      'SUBSTRING FROM FOR',
      'select count(*) from users where substring(email from 1 for 5) = ?',
      'alice',
      'zzzzz',
    ],
    [
      'TO_BASE64',
      'select count(*) from users where to_base64(email) = to_base64(?)',
      SECRETS.emails[0]!,
      'x',
    ],
    [
      'INSERT()',
      "select count(*) from users where insert(email, 1, 5, 'x') = ?",
      'x.secret@example.com',
      'y',
    ],
  ];
  it.each(pairs)('%s', async (_name, sql, right, wrong) => {
    const a = await attempt(sql, [right]);
    const b = await attempt(sql, [wrong]);
    expect('refused' in a ? a.refused : null).toBeNull();
    expect(observable(a)).toEqual(observable(b));
  });

  it.each([
    ['named WINDOW', 'select id, row_number() over w from users window w as (order by email, id)'],
    ['JSON_ARRAYAGG … ORDER BY', 'select json_arrayagg(ssn order by id) from users'],
    [
      'DISTINCTROW / STRAIGHT_JOIN / FORCE INDEX',
      'select distinctrow straight_join u.email from users u force index (primary) straight_join orders o on o.user_id = u.id',
    ],
    ['CONVERT … USING', 'select convert(email using utf8mb4), convert(ssn using latin1) from users'],
  ])('%s runs masked', async (_name, sql) => {
    expect(rowsOf(await attempt(sql)).length).toBeGreaterThan(0);
  });
});
