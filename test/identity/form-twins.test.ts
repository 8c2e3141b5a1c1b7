// A web form and its REST twin share one input schema, checked by the domain function both call
// (identity/people.ts InviteInput, identity/account.ts TokenInput, identity/api-keys.ts ApiKeyInput): the same invalid input gets
// the same field errors through either door, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
});
afterAll(async () => svc?.stop());

/** The REST answer's field errors, as its problem detail spells them (core/errors.ts). */
async function restDetail(
  path: string,
  body: unknown,
  auth: Record<string, string>,
  method = 'POST',
): Promise<string> {
  const res = await svc.fetch(path, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(422);
  const problem = (await res.json()) as { detail: string; errors: { path: string }[] };
  expect(problem.errors.length).toBeGreaterThan(0);
  return problem.detail;
}

/** The page's answer to the same input sent as its form: a 422 whose alert says exactly that. */
async function formAlert(path: string, fields: Record<string, string>): Promise<string> {
  const res = await svc.fetch(path, {
    method: 'POST',
    headers: { cookie: admin.cookie },
    body: new URLSearchParams({ _csrf: admin.csrf, ...fields }),
    redirect: 'manual',
  });
  expect(res.status).toBe(422);
  const html = await res.text();
  const alert = /<p class="warning error" role="alert">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return alert
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/**
 * A page that answers a refused form by redirecting back with an error flash: the flash's text.
 * The page shows that text as its alert (api/web/kit/page-context.tsx redirectWith).
 */
async function formFlash(path: string, fields: Record<string, string>): Promise<string> {
  const res = await svc.fetch(path, {
    method: 'POST',
    headers: { cookie: admin.cookie },
    body: new URLSearchParams({ _csrf: admin.csrf, ...fields }),
    redirect: 'manual',
  });
  expect(res.status).toBe(303);
  const to = new URL(res.headers.get('location') ?? '', 'http://page.invalid');
  return to.searchParams.get('error') ?? '';
}

describe('the invite form and POST /api/v1/users', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    {
      name: 'not an address',
      json: { email: 'not-an-address', role: 'member' },
      form: { email: 'not-an-address', role: 'member' },
    },
    {
      name: 'no such role',
      json: { email: 'ada@twins.example.test', role: 'owner' },
      form: { email: 'ada@twins.example.test', role: 'owner' },
    },
    {
      name: 'a name too long and an empty address',
      json: { email: '', name: 'n'.repeat(201), role: 'member' },
      form: { email: '', name: 'n'.repeat(201), role: 'member' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const rest = await restDetail('/api/v1/users', c.json, { 'x-api-key': svc.apiKey });
      expect(await formAlert('/people', c.form)).toBe(rest);
    });

  it('invited nobody', async () => {
    const rows = await svc.deps.sql`select 1 from users where email like '%twins.example.test'`;
    expect(rows.length).toBe(0);
  });

  it('keeps the invitation as typed when it is refused', async () => {
    const res = await svc.fetch('/people', {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({
        _csrf: admin.csrf,
        email: svc.admin.email,
        name: 'Ann Taken',
        role: 'admin',
      }),
      redirect: 'manual',
    });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toMatch(new RegExp(`id="invite-email"[^>]*value="${svc.admin.email}"`));
    expect(html).toMatch(/id="invite-name"[^>]*value="Ann Taken"/);
    expect(html).toMatch(/<option value="admin" selected="">/);
  });
});

describe('the role form and PATCH /api/v1/users/:id', () => {
  let person: string;
  beforeAll(async () => {
    const res = await svc.fetch('/api/v1/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': svc.apiKey },
      body: JSON.stringify({ email: 'role.twin@example.test', role: 'member' }),
    });
    expect(res.status).toBe(201);
    person = ((await res.json()) as { id: string }).id;
  });

  for (const role of ['owner', ''])
    it(`answers the same field errors: role ${JSON.stringify(role)}`, async () => {
      const rest = await restDetail(
        `/api/v1/users/${person}`,
        { role },
        { 'x-api-key': svc.apiKey },
        'PATCH',
      );
      expect(await formFlash(`/people/${person}/role`, { role })).toBe(rest);
    });

  it('changed no role', async () => {
    const [row] = await svc.deps.sql<{ role: string }[]>`select role from users where id = ${person}`;
    expect(row!.role).toBe('member');
  });
});

describe('the token form and POST /api/v1/tokens', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'no name', json: { name: '  ' }, form: { name: '  ' } },
    {
      name: 'expiry of zero days',
      json: { name: 'ci', expires_in_days: 0 },
      form: { name: 'ci', expires_in_days: '0' },
    },
    {
      name: 'a name too long and an expiry too far',
      json: { name: 't'.repeat(201), expires_in_days: 4000 },
      form: { name: 't'.repeat(201), expires_in_days: '4000' },
    },
    {
      name: 'a fractional expiry',
      json: { name: 'ci', expires_in_days: 1.5 },
      form: { name: 'ci', expires_in_days: '1.5' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const rest = await restDetail('/api/v1/tokens', c.json, {
        cookie: admin.cookie,
        'x-csrf-token': admin.csrf,
      });
      expect(await formAlert('/settings/tokens', c.form)).toBe(rest);
    });

  it('issued no token', async () => {
    const rows = await svc.deps.sql`select 1 from personal_tokens where name = 'ci' or name like 'ttt%'`;
    expect(rows.length).toBe(0);
  });
});

describe('the API key form and POST /api/v1/api-keys', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'no name', json: { name: '  ' }, form: { name: '  ', owner: 'me' } },
    {
      name: 'a name too long',
      json: { name: 'k'.repeat(201) },
      form: { name: 'k'.repeat(201), owner: 'me' },
    },
    {
      name: 'a service account of no such role',
      json: { name: 'twin-key', service_account: { role: 'owner' } },
      form: { name: 'twin-key', owner: 'service_account', role: 'owner' },
    },
    {
      name: 'no name and a super admin service account',
      json: { name: '', service_account: { role: 'super_admin' } },
      form: { name: '', owner: 'service_account', role: 'super_admin' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const rest = await restDetail('/api/v1/api-keys', c.json, { 'x-api-key': svc.apiKey });
      expect(await formFlash('/organization/api-keys', c.form)).toBe(rest);
    });

  it('issued no key', async () => {
    const rows = await svc.deps.sql`select 1 from api_keys where name = 'twin-key' or name like 'kkk%'`;
    expect(rows.length).toBe(0);
  });
});

describe('the agent form and POST /api/v1/agents', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'no name', json: { name: ' ' }, form: { name: ' ' } },
    { name: 'a name with a space', json: { name: 'twin agent' }, form: { name: 'twin agent' } },
    { name: 'a name too long', json: { name: 'a'.repeat(101) }, form: { name: 'a'.repeat(101) } },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const rest = await restDetail('/api/v1/agents', c.json, { 'x-api-key': svc.apiKey });
      expect(await formFlash('/organization/agents', c.form)).toBe(rest);
    });

  it('registered no agent', async () => {
    const rows = await svc.deps.sql`select 1 from agents where name like 'twin%' or name like 'aaa%'`;
    expect(rows.length).toBe(0);
  });
});

describe('the database page grant forms and their REST routes', () => {
  let db: { id: string; credentials: { id: string }[] };
  beforeAll(async () => {
    const pg = servers().postgres;
    const res = await svc.fetch('/api/v1/desk/databases', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': svc.apiKey },
      body: JSON.stringify({
        name: 'twins-restricted',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        restrict_access: true,
        credentials: [
          { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        ],
      }),
    });
    expect(res.status).toBe(201);
    db = (await res.json()) as typeof db;
  });

  /** The REST field errors as `path: message` lines. */
  async function restErrors(path: string, body: unknown): Promise<string[]> {
    const res = await svc.fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': svc.apiKey },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { errors: { path: string; message: string }[] };
    return problem.errors.map((e) => `${e.path}: ${e.message}`);
  }

  /** The page's 422 answer: the error shown beside the grant form's user field. */
  async function pageErrors(path: string, fields: Record<string, string>): Promise<string[]> {
    const res = await svc.fetch(path, {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrf, ...fields }),
      redirect: 'manual',
    });
    expect(res.status).toBe(422);
    const html = await res.text();
    const shown = /id="grant-user-error">([^<]*)</.exec(html)?.[1];
    return shown === undefined ? [] : [`user_id: ${shown.replaceAll('&#39;', "'")}`];
  }

  for (const userId of ['', 'not-a-user', 'usr_lowercase00000000000000000'])
    it(`database grant answers the same field errors: user_id ${JSON.stringify(userId)}`, async () => {
      const rest = await restErrors(`/api/v1/desk/databases/${db.id}/grants`, { user_id: userId });
      expect(rest.length).toBeGreaterThan(0);
      expect(await pageErrors(`/databases/${db.id}/grants`, { user_id: userId })).toEqual(rest);
    });

  it('credential grant answers the same field errors for a malformed user', async () => {
    const cred = db.credentials[0]!.id;
    const rest = await restErrors(`/api/v1/desk/databases/${db.id}/credentials/${cred}/grants`, {
      user_id: 'not-a-user',
    });
    expect(rest.length).toBeGreaterThan(0);
    const page = await pageErrors(`/databases/${db.id}/credentials/${cred}/grants`, {
      grantee: 'user:not-a-user',
    });
    expect(page).toEqual(rest);
  });

  it('granted nothing', async () => {
    expect((await svc.deps.sql`select 1 from database_grants where database_id = ${db.id}`).length).toBe(0);
    expect(
      (await svc.deps.sql`select 1 from credential_grants where credential_id = ${db.credentials[0]!.id}`)
        .length,
    ).toBe(0);
  });
});

describe('the AI client limits form and PUT /api/v1/ai-clients/:clientId', () => {
  // The form's body is capped at 8 KiB (api/middleware/body-limit.ts), so the schema's 500-id cap
  // is out of its reach; what both doors can send is a client or a database that does not exist.
  it('answers the same field errors: no such client', async () => {
    const rest = await restDetail(
      '/api/v1/ai-clients/twin-client',
      { disabled: false, database_ids: ['db_twin'] },
      { 'x-api-key': svc.apiKey },
      'PUT',
    );
    expect(
      await formFlash('/organization/ai-clients', { client_id: 'twin-client', database_ids: 'db_twin' }),
    ).toBe(rest);
  });
});
