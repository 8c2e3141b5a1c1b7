// Coverage suite: ordinary analyst queries (string, date, JSON, window, regex,
// full-text, set operations) run under the fixture's policy, on both engines. Each must run with
// the protected columns masked; the refusal rate is printed and must stay at or under 5%, each
// refusal with a clear message (no parser dump).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Attempt, expectNoLeak } from './protection-fixture.ts';
import { startMariadbTarget, startPostgresTarget, type Target } from './protection-targets.ts';

/** Queries that read the same on both engines. */
const BOTH = [
  "select id, upper(name), lower(email), concat(name, ' <', email, '>') from users order by id",
  'select name, length(email), char_length(phone) from users',
  "select replace(email, '@', ' at '), trim(name), ltrim(rtrim(phone)) from users",
  "select left(ssn, 3), right(phone, 2), substring(name, 2, 3), lpad(name, 10, '.') from users",
  "select coalesce(email, 'none'), nullif(name, 'user1') from users",
  'select case when id > 1 then email else name end as who from users',
  "select id from users where email like '%example%' and name not like 'x%'",
  'select count(*), count(distinct email), count(distinct ssn) from users',
  'select name, sum(total), avg(total), min(total), max(total) from users u join orders o on o.user_id = u.id group by name',
  'select u.name, o.total from users u left join orders o on o.user_id = u.id order by o.total desc',
  'select name from users where id in (select user_id from orders where total > 10)',
  'select name from users u where exists (select 1 from orders o where o.user_id = u.id)',
  'select name from users union select note from orders',
  'select name from users union all select email from users',
  'select id, row_number() over (order by email, id), rank() over (order by ssn) from users',
  'select id, sum(total) over (partition by user_id order by id) from orders',
  'select id, lag(email) over (order by id), lead(phone) over (order by id) from users',
  'with big as (select user_id, total from orders where total >= 20) select u.name, b.total from big b join users u on u.id = b.user_id',
  'select extract(year from placed), extract(month from placed) from orders',
  "select placed, placed + interval '1' day from orders",
  'select abs(total - 20), round(total / 3, 2), floor(total), ceil(total) from orders',
  'select md5(email), md5(ssn) from users',
  'select name, greatest(id, 2), least(id, 2) from users',
  'select distinct email, ssn from users',
  'select * from users order by id limit 2',
  'select u.* from users u where u.id = 1',
  "select name from users where phone like '%01' or email = 'x'",
  "select id, total from orders where placed between '2024-01-01' and '2024-12-31'",
  "select count(*) from users where ssn is not null and email <> ''",
  'select name, (select count(*) from orders o where o.user_id = u.id) from users u',
];

const POSTGRES_ONLY = [
  "select string_agg(email, ', ' order by id), array_agg(ssn) from users",
  "select date_trunc('month', placed), to_char(placed, 'YYYY-MM'), age(placed, date '2024-01-01') from orders",
  "select meta->>'n', meta->'tags'->>0, jsonb_array_length(meta->'tags') from orders",
  "select jsonb_build_object('email', email, 'ssn', ssn), json_agg(phone) over () from users",
  "select email ~ '^[a-z]+\\.', regexp_replace(email, '@.*$', ''), regexp_match(phone, '\\d+$') from users",
  "select split_part(email, '@', 2), reverse(name), position('@' in email), starts_with(email, 'a') from users",
  "select to_tsvector('english', email) @@ plainto_tsquery('english', 'secret') from users",
  'select name from users intersect select name from users except select note from orders',
  'select * from generate_series(1, 3) g(n) join users u on u.id = g.n',
  "select e.value from orders, jsonb_array_elements_text(meta->'tags') e",
  "select email similar to '%example%', overlay(email placing 'X' from 1 for 1) from users",
  "select encode(convert_to(email, 'UTF8'), 'base64'), pg_typeof(ssn) from users",
  "select email ^@ 'a', lower(email) || '!' from users",
  'select xmlagg(xmlelement(name u, name)) from users',
  'select percentile_cont(0.5) within group (order by total) from orders',
  'select u.name, x.n from users u cross join lateral (select count(*) as n from orders o where o.user_id = u.id) x',
];

const MARIADB_ONLY = [
  "select group_concat(email order by id separator ', '), json_arrayagg(ssn) from users",
  "select date_format(placed, '%Y-%m'), datediff(placed, '2024-01-01'), dayname(placed) from orders",
  "select json_extract(meta, '$.n'), json_unquote(json_extract(meta, '$.tags[0]')), json_length(meta) from orders",
  "select json_object('email', email, 'ssn', ssn) from users",
  "select email regexp '^[a-z]+', regexp_replace(email, '@.*$', ''), regexp_substr(phone, '[0-9]+$') from users",
  "select substring_index(email, '@', -1), locate('@', email), instr(email, '.') from users",
  "select match(note) against ('order' in natural language mode) from orders",
  "select mid(email, 2, 3), insert(email, 1, 2, 'X'), to_base64(email), find_in_set('a', email) from users",
  'select id, row_number() over w from users window w as (order by email, id)',
  'select distinctrow name from users',
  'select u.name from users u straight_join orders o on o.user_id = u.id',
  'select name from users force index (primary) where id > 0',
  "select name from users where name sounds like 'user'",
  'select substring(email from 2 for 4), convert(ssn using utf8mb4) from users',
  'select name from users where id = any (select user_id from orders)',
  "select if(total > 15, 'big', 'small'), ifnull(note, '-') from orders",
];

interface Tally {
  ran: number;
  refused: string[];
}

async function tally(t: Target, queries: string[], engine: string): Promise<Tally> {
  const out: Tally = { ran: 0, refused: [] };
  for (const sql of queries) {
    const a: Attempt = await t.fx.attempt(sql);
    expectNoLeak(a, t.fx.salt);
    if ('refused' in a) {
      // A refusal names the construct; it is never the parser's list of expected tokens.
      expect(a.refused, sql).not.toMatch(/Expected "/);
      out.refused.push(`${engine}: ${sql} -> ${a.refused}`);
    } else if ('failed' in a) {
      throw new Error(`${engine}: ${sql} failed on the server: ${a.failed}`);
    } else out.ran++;
  }
  return out;
}

let pg: Target;
let maria: Target;
beforeAll(async () => {
  [pg, maria] = await Promise.all([startPostgresTarget(), startMariadbTarget()]);
});
afterAll(async () => {
  await pg?.stop();
  await maria?.stop();
});

describe('coverage: ordinary analyst queries run under a policy', () => {
  it('at most 5% are refused, each with a clear message, none leaking', async () => {
    const p = await tally(pg, [...BOTH, ...POSTGRES_ONLY], 'postgres');
    const m = await tally(maria, [...BOTH, ...MARIADB_ONLY], 'mariadb');
    const total = BOTH.length * 2 + POSTGRES_ONLY.length + MARIADB_ONLY.length;
    const refused = p.refused.length + m.refused.length;
    console.log(
      `protection coverage: postgres ${p.refused.length}/${BOTH.length + POSTGRES_ONLY.length} refused, mariadb ${m.refused.length}/${BOTH.length + MARIADB_ONLY.length} refused, ${((refused / total) * 100).toFixed(1)}% of ${total}`,
    );
    for (const r of [...p.refused, ...m.refused]) console.log(`  refused ${r}`);
    expect(total).toBeGreaterThanOrEqual(60);
    expect(refused / total).toBeLessThanOrEqual(0.05);
  });
});
