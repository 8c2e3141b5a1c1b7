// The database, credential, data-protection policy and workflow-run forms and their REST twins
// share one check each (registry/database-input.ts, governance/protection/policies.ts, the
// workflow's input definitions in automation/runs.ts startRun): the same invalid input gets the
// same field errors through either door, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };
let db: { id: string; credentials: { id: string }[] };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
  const pg = servers().postgres;
  const res = await rest('POST', '/api/v1/desk/databases', {
    name: 'twins',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    ],
  });
  expect(res.status).toBe(201);
  db = (await res.json()) as typeof db;
});
afterAll(async () => svc?.stop());

const rest = (method: string, path: string, body: unknown) =>
  svc.fetch(path, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': svc.apiKey },
    body: JSON.stringify(body),
  });

/** The REST answer's problem: 422 with at least one field error. */
async function restProblem(method: string, path: string, body: unknown) {
  const res = await rest(method, path, body);
  expect(res.status).toBe(422);
  const problem = (await res.json()) as { detail: string; errors: { path: string; message: string }[] };
  expect(problem.errors.length).toBeGreaterThan(0);
  return problem;
}

const post = (path: string, fields: Record<string, string>) =>
  svc.fetch(path, {
    method: 'POST',
    headers: { cookie: admin.cookie },
    body: new URLSearchParams({ _csrf: admin.csrf, _confirmed: 'yes', ...fields }),
    redirect: 'manual',
  });

/** A page that answers a refused form by redirecting back with the error as its flash. */
async function formFlash(path: string, fields: Record<string, string>): Promise<string> {
  const res = await post(path, fields);
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location') ?? '', 'http://page.invalid').searchParams.get('error') ?? '';
}

const decode = (s: string) =>
  s
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

/** The database pages' 422 answer: each message under its field, as `field: message`. */
async function fieldMessages(path: string, fields: Record<string, string>): Promise<string[]> {
  const res = await post(path, fields);
  expect(res.status).toBe(422);
  const html = await res.text();
  return [...html.matchAll(/id="f-(?:[\w]+-)?(\w+)-error">([^<]*)</g)]
    .map((m) => `${m[1]}: ${decode(m[2]!)}`)
    .filter((line, i, all) => all.indexOf(line) === i)
    .sort();
}

describe('the database forms and POST/PATCH /api/v1/desk/databases', () => {
  /** REST field errors as the registration form names its fields (api/web/databases/form.ts). */
  const named = (errors: { path: string; message: string }[], credentialForm = false) =>
    [
      ...new Map(
        errors.map((e) => {
          const m = /^credentials\.(\d+)\.(\w+)$/.exec(e.path);
          const field = m ? (credentialForm ? m[2]! : `c${m[1]}_${m[2]}`) : e.path;
          return [field, `${field}: ${e.message}`] as const;
        }),
      ).values(),
    ].sort();

  it('registration answers the same field errors: no name, a port out of range, no username', async () => {
    const pg = servers().postgres;
    const problem = await restProblem('POST', '/api/v1/desk/databases', {
      adapter: 'postgres',
      hostname: pg.host,
      port: 70000,
      database: pg.database,
      credentials: [{ password: 'x', reviews_required: 0, default_credential: true }],
    });
    const page = await fieldMessages('/databases', {
      adapter: 'postgres',
      hostname: pg.host,
      port: '70000',
      database: pg.database,
      c0_password: 'x',
      c0_reviews_required: '0',
    });
    expect(page).toEqual(named(problem.errors));
  });

  it('settings answer the same field errors: a port out of range and too many AI rows', async () => {
    const problem = await restProblem('PATCH', `/api/v1/desk/databases/${db.id}`, {
      port: 0,
      ai_max_rows: -1,
    });
    const page = await fieldMessages(`/databases/${db.id}`, { port: '0', ai_max_rows: '-1' });
    expect(page).toEqual(named(problem.errors));
  });

  it('a credential answers the same field errors: a negative review count', async () => {
    const cred = db.credentials[0]!.id;
    const problem = await restProblem('PATCH', `/api/v1/desk/databases/${db.id}`, {
      credentials: [{ id: cred, username: 'u', reviews_required: -1, timeout: 0 }],
    });
    const page = await fieldMessages(`/databases/${db.id}/credentials/${cred}`, {
      username: 'u',
      reviews_required: '-1',
      timeout: '0',
    });
    expect(page).toEqual(named(problem.errors, true));
  });

  it('registered and changed nothing', async () => {
    const rows = await svc.deps.sql<{ port: number }[]>`select port from databases where org_id = (
      select org_id from databases where id = ${db.id})`;
    expect(rows).toEqual([{ port: servers().postgres.port }]);
  });
});

describe('the data-protection forms and the REST policy routes', () => {
  let policy: string;
  beforeAll(async () => {
    const res = await rest('POST', `/api/v1/desk/databases/${db.id}/policies`, {
      name: 'twins',
      rules: [{ table: 'users', column: 'ssn', action: 'mask' }],
    });
    expect(res.status).toBe(201);
    policy = ((await res.json()) as { id: string }).id;
  });

  it('a new policy answers the same field errors: no name', async () => {
    const problem = await restProblem('POST', `/api/v1/desk/databases/${db.id}/policies`, {
      name: '  ',
      rules: [],
    });
    expect(await formFlash(`/databases/${db.id}/policies`, { name: '  ' })).toBe(problem.detail);
  });

  // The form adds one rule to the list; PATCH takes the whole list.
  const existing = {
    schema: null,
    table: 'users',
    column: 'ssn',
    action: 'mask',
    keep_first: 0,
    keep_last: 0,
  };
  const cases: { name: string; rule: Record<string, unknown>; form: Record<string, string> }[] = [
    {
      name: 'no column and no such action',
      rule: { schema: 'public', table: 'users', column: '', action: 'scramble', keep_first: 0, keep_last: 0 },
      form: { table: 'public.users', column: '', action: 'scramble' },
    },
    {
      name: 'a partial rule that keeps nothing',
      rule: {
        schema: 'public',
        table: 'users',
        column: 'email',
        action: 'partial',
        keep_first: 0,
        keep_last: 0,
      },
      form: { table: 'public.users', column: 'email', action: 'partial', keep_first: '0', keep_last: '0' },
    },
    {
      name: 'keeping too many characters',
      rule: {
        schema: 'public',
        table: 'users',
        column: 'email',
        action: 'partial',
        keep_first: 65,
        keep_last: 0,
      },
      form: { table: 'public.users', column: 'email', action: 'partial', keep_first: '65' },
    },
    {
      name: 'a second rule for the same column',
      rule: { schema: null, table: 'users', column: 'ssn', action: 'hash', keep_first: 0, keep_last: 0 },
      form: { table: 'users', column: 'ssn', action: 'hash' },
    },
  ];
  for (const c of cases)
    it(`a new rule answers the same field errors: ${c.name}`, async () => {
      const problem = await restProblem('PATCH', `/api/v1/desk/databases/${db.id}/policies/${policy}`, {
        rules: [existing, c.rule],
      });
      expect(await formFlash(`/databases/${db.id}/policies/${policy}/rules`, c.form)).toBe(problem.detail);
    });

  it('assignments answer the same field errors: a user of no organization here', async () => {
    const problem = await restProblem(
      'PUT',
      `/api/v1/desk/databases/${db.id}/policies/${policy}/assignments`,
      { users: ['usr_nobody'], roles: [] },
    );
    expect(
      await formFlash(`/databases/${db.id}/policies/${policy}/assignments`, { users: 'usr_nobody' }),
    ).toBe(problem.detail);
  });

  it('created and changed nothing', async () => {
    const policies = await svc.deps.sql`select 1 from data_protection_policies where database_id = ${db.id}`;
    expect(policies.length).toBe(1);
    const rules = await svc.deps.sql<{ column_name: string; action: string }[]>`
      select column_name, action from data_protection_rules where policy_id = ${policy}`;
    expect(rules).toEqual([{ column_name: 'ssn', action: 'mask' }]);
    const assigned = await svc.deps
      .sql`select 1 from data_protection_assignments where policy_id = ${policy}`;
    expect(assigned.length).toBe(0);
  });
});

describe('the Reviews page edit form and PATCH /api/v1/desk/query-requests/:id', () => {
  // A comment's 10 000-character cap is beyond the form's 8 KiB body (api/middleware/body-limit.ts):
  // what both doors can send is an empty statement.
  it('answers the same field errors: an empty statement', async () => {
    const pg = servers().postgres;
    const reviewed = await rest('POST', '/api/v1/desk/databases', {
      name: 'twins-reviewed',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 1, default_credential: true },
      ],
    });
    expect(reviewed.status).toBe(201);
    const submitted = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookie, 'x-csrf-token': admin.csrf },
      body: JSON.stringify({
        database_id: ((await reviewed.json()) as { id: string }).id,
        statement: 'select 1',
      }),
    });
    expect(submitted.status).toBeLessThan(300);
    const id = ((await submitted.json()) as { request: { id: string } }).request.id;
    const res = await svc.fetch(`/api/v1/desk/query-requests/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie: admin.cookie, 'x-csrf-token': admin.csrf },
      body: JSON.stringify({ statement: '' }),
    });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { detail: string };
    expect(await formFlash(`/reviews/${id}/edit`, { statement: '' })).toBe(problem.detail);
    const [row] = await svc.deps.sql<
      { statement: string }[]
    >`select statement from query_requests where id = ${id}`;
    expect(row!.statement).toBe('select 1');
  });
});

describe('the run form and POST /api/v1/workflows/:id/run', () => {
  let wf: string;
  beforeAll(async () => {
    const res = await rest('POST', '/api/v1/workflows', {
      name: 'twins',
      inputs: [
        { key: 'days', description: '', type: 'integer' },
        { key: 'note', description: '', type: 'string', default: 'none' },
      ],
      steps: [{ name: 'hello', action: { __type__: 'chat', chat_channel: '#general', message: 'hi' } }],
    });
    expect(res.status).toBe(201);
    wf = ((await res.json()) as { id: string }).id;
  });

  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'a required input left out', json: { note: 'x' }, form: { 'input.note': 'x' } },
    { name: 'no such input', json: { days: 3, weeks: 1 }, form: { 'input.days': '3', 'input.weeks': '1' } },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const problem = await restProblem('POST', `/api/v1/workflows/${wf}/run`, c.json);
      expect(await formFlash(`/workflows/${wf}/run`, c.form)).toBe(problem.detail);
    });

  it('started no run', async () => {
    expect((await svc.deps.sql`select 1 from workflow_runs where workflow_id = ${wf}`).length).toBe(0);
  });
});
