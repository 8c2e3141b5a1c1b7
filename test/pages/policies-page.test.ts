// An admin defines a data-protection policy in the web UI, assigns it, and previews
// what a person sees of a table — the same answer the person's queries get.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };
let memberId: string;
let memberToken: string;
let dbId: string;
const TABLE = `customers_${Date.now()}`;

const target = withHarnessPostgres;

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
  await target(async (sql) => {
    await sql`create table ${sql(TABLE)} (id int, name text, email text, ssn text)`;
    await sql`insert into ${sql(TABLE)} values (1, 'Ada', 'ada@example.test', '111-22-3333')`;
  });
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'crm',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    }),
  });
  dbId = ((await res.json()) as { id: string }).id;
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  memberId = (
    await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: 'support@example.test',
      role: 'member',
      password: 'support password 1',
    })
  ).id;
  memberToken = (await createPersonalToken(svc.deps.sql, { userId: memberId, name: 't', expiresAt: null }))
    .secret;
});
afterAll(async () => {
  await svc?.stop();
  await target((sql) => sql`drop table if exists ${sql(TABLE)}`);
});

const post = (path: string, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams({ _csrf: admin.csrf });
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) body.append(k, x);
  return svc.fetch(path, { method: 'POST', headers: { cookie: admin.cookie }, body, redirect: 'manual' });
};
const html = async (path: string) => (await svc.fetch(path, { headers: { cookie: admin.cookie } })).text();

describe('the data-protection policies page', () => {
  let policyPath: string;

  it('says that unnamed columns are hidden by default, and creates a policy', async () => {
    expect(await html(`/databases/${dbId}/policies`)).toContain('every column no rule names is hidden');
    const res = await post(`/databases/${dbId}/policies`, { name: 'Support staff' });
    expect(res.status).toBe(303);
    policyPath = new URL(res.headers.get('location')!, svc.url).pathname;
    expect(policyPath).toMatch(/\/policies\/dpp_/);
  });

  it('adds rules, refuses a bad one with its reason, and assigns the policy', async () => {
    const table = `public.${TABLE}`;
    const rules: Array<[string, string]> = [
      ['id', 'show'],
      ['name', 'show'],
      ['email', 'mask'],
    ];
    for (const [column, action] of rules) {
      const res = await post(`${policyPath}/rules`, {
        table,
        column,
        action,
        keep_first: '0',
        keep_last: '0',
      });
      expect(decodeURIComponent(res.headers.get('location')!)).toContain('notice=Rule added');
    }
    const bad = await post(`${policyPath}/rules`, {
      table,
      column: 'ssn',
      action: 'partial',
      keep_first: '0',
      keep_last: '0',
    });
    expect(decodeURIComponent(bad.headers.get('location')!)).toContain('keeps keep_first and/or keep_last');
    expect((await post(`${policyPath}/assignments`, { users: [memberId] })).status).toBe(303);
    const page = await html(policyPath);
    expect(page).toContain('data-label="Treatment">masked (&#39;****&#39;)');
    expect(page).toMatch(/<option value="usr_\w+" selected="">support@example\.test/);
    expect(page).not.toContain('no such column in the database');
  });

  it('marks a rule whose table or column the database does not have (a typo would protect nothing)', async () => {
    for (const [table, column] of [
      [`public.${TABLE}`, 'emial'],
      ['public.no_such_table_here', 'ssn'],
    ] as const) {
      const res = await post(`${policyPath}/rules`, {
        table,
        column,
        action: 'hide',
        keep_first: '0',
        keep_last: '0',
      });
      expect(decodeURIComponent(res.headers.get('location')!)).toContain('notice=Rule added');
    }
    const page = await html(policyPath);
    expect(page).toMatch(/emial <span class="badge warn">no such column in the database<\/span>/);
    expect(page).toMatch(/ssn <span class="badge warn">no such table in the database<\/span>/);
    // Only those two: the rules that name real columns carry no mark.
    expect(page.match(/no such (column|table) in the database/g)).toHaveLength(2);
  });

  it('previews what the member sees: email masked, ssn hidden by default — as their query gets it', async () => {
    const full = await html(`${policyPath}?as=${memberId}&table=${encodeURIComponent(`public.${TABLE}`)}`);
    const page = full.slice(full.indexOf('id="preview-result"'));
    const row = (col: string) =>
      new RegExp(
        `data-label="Column">${col}</td>[\\s\\S]*?data-label="They see"><span class="badge (\\w+)">(\\w+)</span>([^<]*<span class="muted small">([^<]*))?`,
      ).exec(page);
    expect(row('name')?.[2]).toBe('shown');
    expect(row('email')?.[2]).toBe('masked');
    expect(row('ssn')?.[2]).toBe('hidden');
    expect(row('ssn')?.[4]).toContain('hidden by default');
    const q = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: dbId, statement: `select name, email, ssn from ${TABLE}` }),
    });
    const { result } = (await q.json()) as { result: { rows: unknown[][]; messages: string[] } };
    expect(result.rows).toEqual([['Ada', '****', null]]);
    // The default deny is said, not silent: the note names the column that read as NULL.
    expect(result.messages.join('\n')).toContain(
      `"Support staff" names no rule for ${TABLE}.ssn, so they read as NULL`,
    );
    // The admin has no policy: the preview for them shows every column.
    const [root] = await svc.deps.sql<
      { id: string }[]
    >`select id from users where email = ${svc.admin.email}`;
    const mine = await html(`${policyPath}?as=${root!.id}&table=${encodeURIComponent(`public.${TABLE}`)}`);
    expect(mine).toContain('No policy applies to this person');
  });

  it('taking people out of the policy asks first, naming every one of them (repeated form fields kept)', async () => {
    // A second person (the signed-in admin may not take themselves off a policy of their own).
    const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
    const other = await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: 'analyst@example.test',
      role: 'member',
      password: null,
    });
    expect((await post(`${policyPath}/assignments`, { users: [memberId, other.id] })).status).toBe(303);
    const ask = await post(`${policyPath}/assignments`, { users: [] });
    expect(ask.status).toBe(200);
    const asked = await ask.text();
    expect(asked).toContain('People who lose its protection: support@example.test, analyst@example.test');
    // Back to the member alone: the analyst falls out, so it asks again; confirmed, it is saved.
    const again = await post(`${policyPath}/assignments`, { users: [memberId] });
    expect(await again.text()).toContain('People who lose its protection: analyst@example.test.');
    expect((await post(`${policyPath}/assignments`, { users: [memberId], _confirmed: 'yes' })).status).toBe(
      303,
    );
    const people = await svc.deps.sql<{ user_id: string }[]>`
      select user_id from data_protection_assignments where policy_id = ${policyPath.split('/').pop()!}`;
    expect(people.map((p) => p.user_id)).toEqual([memberId]);
  });

  it('removes a rule and deletes the policy, each after a confirmation naming who loses protection', async () => {
    const ask = await post(`${policyPath}/rules/2/delete`, {});
    expect(ask.status).toBe(200);
    const asked = await ask.text();
    expect(asked).toContain('People who lose this protection: support@example.test');
    expect(asked).toMatch(/support@example\.test will see [^<]*\.email in clear/);
    expect(await html(policyPath)).toContain('data-label="Treatment">masked (&#39;****&#39;)');
    expect((await post(`${policyPath}/rules/2/delete`, { _confirmed: 'yes' })).status).toBe(303);
    expect(await html(policyPath)).not.toContain('data-label="Treatment">masked (&#39;****&#39;)');
    expect(await (await post(`${policyPath}/delete`, {})).text()).toContain('Delete the policy');
    expect((await post(`${policyPath}/delete`, { _confirmed: 'yes' })).status).toBe(303);
    expect(await html(`/databases/${dbId}/policies`)).toContain('No policy yet');
  });
});
