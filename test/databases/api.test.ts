import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

const b64 = (pem: string) => Buffer.from(pem).toString('base64');
function call(method: string, path: string, body?: unknown) {
  return svc.fetch(`/api/v1/desk/databases${path}`, {
    method,
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
function pgBody(extra: Record<string, unknown> = {}) {
  const pg = servers().postgres;
  return {
    name: 'orders',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    ],
    ...extra,
  };
}
async function count(): Promise<number> {
  const [row] = await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from databases`;
  return row!.n;
}

describe('POST /api/v1/desk/databases', () => {
  it('creates with the spec defaults and never returns the password', async () => {
    const res = await call('POST', '', pgBody());
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(servers().postgres.password);
    const db = JSON.parse(text);
    expect(db.id).toMatch(/^db_[0-9A-Z]{26}$/);
    expect(db).toMatchObject({
      api_id: null,
      ssl: false,
      verify_server_hostname: false,
      restrict_access: false,
      review_bypass_allowed: false,
      ai_enabled: false,
      ai_max_rows: 500,
      group: null,
      slack_channel: null,
      agent_id: null,
    });
    expect(db.credentials).toHaveLength(1);
    expect(db.credentials[0]).toMatchObject({
      ai_allowed: false,
      reviews_required: 0,
      default_credential: true,
      timeout: null,
    });
    expect(db.credentials[0].id).toMatch(/^crd_/);
    expect(db.credentials[0]).not.toHaveProperty('password');
    expect(db.inserted_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    // Stored sealed, not in clear.
    const [row] = await svc.deps.sql<
      { password_enc: string }[]
    >`select password_enc from credentials where id = ${db.credentials[0].id}`;
    expect(row!.password_enc.startsWith('cs1.')).toBe(true);
    expect(row!.password_enc).not.toContain(servers().postgres.password);
  });

  it('fills the port from the adapter', async () => {
    const { port: _omit, ...body } = pgBody({ adapter: 'mysql', name: 'my' });
    const db = await (await call('POST', '', body)).json();
    expect(db.port).toBe(3306);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown adapter', { adapter: 'mongo' }, 'adapter'],
    ['a missing hostname', { hostname: undefined }, 'hostname'],
    ['no credential', { credentials: [] }, 'credentials'],
    [
      'two default credentials',
      {
        credentials: [
          { username: 'a', password: 'x', default_credential: true },
          { username: 'b', password: 'y', default_credential: true },
        ],
      },
      'credentials',
    ],
    [
      'verify_server_hostname without a CA',
      { ssl: true, verify_server_hostname: true },
      'verify_server_hostname',
    ],
    ['a bad base64 certificate', { ssl: true, ssl_ca_cert: 'not base64 at all!' }, 'ssl_ca_cert'],
    ['base64 that is no PEM', { ssl: true, ssl_ca_cert: b64('hello world') }, 'ssl_ca_cert'],
    ['a credential without password', { credentials: [{ username: 'a' }] }, 'credentials.0.password'],
    ['a port out of range', { port: 70000 }, 'port'],
  ];
  for (const [what, patch, field] of invalid) {
    it(`422 for ${what}, naming ${field}, writing nothing`, async () => {
      const before = await count();
      const res = await call('POST', '', pgBody(patch));
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const problem = await res.json();
      expect(problem.errors.map((e: { path: string }) => e.path)).toContain(field);
      expect(await count()).toBe(before);
    });
  }
});

describe('GET, PATCH, DELETE /api/v1/desk/databases/:id', () => {
  it('reads back what was created; unknown ids are 404', async () => {
    const created = await (await call('POST', '', pgBody({ name: 'read-me', group: 'finance' }))).json();
    const got = await (await call('GET', `/${created.id}`)).json();
    expect(got).toEqual(created);
    expect((await call('GET', '/db_01M7ZJQEWKV8HR45Y5E3J2CXXG')).status).toBe(404);
  });

  it('patches fields and credentials: update by id, create without, delete with delete: true, keep the rest', async () => {
    const created = await (
      await call(
        'POST',
        '',
        pgBody({
          credentials: [
            { username: 'a', password: 'pa' },
            { username: 'b', password: 'pb' },
          ],
        }),
      )
    ).json();
    const [a, b] = created.credentials;
    expect(a.default_credential).toBe(true);
    const res = await call('PATCH', `/${created.id}`, {
      ai_enabled: true,
      ai_max_rows: 50,
      credentials: [
        { id: a.id, ai_allowed: true, timeout: 5 },
        { username: 'c', password: 'pc', default_credential: true },
        { id: b.id, delete: true },
      ],
    });
    expect(res.status).toBe(200);
    const patched = await res.json();
    expect(patched).toMatchObject({ ai_enabled: true, ai_max_rows: 50, name: created.name });
    const byName = Object.fromEntries(patched.credentials.map((c: { username: string }) => [c.username, c]));
    expect(Object.keys(byName).sort()).toEqual(['a', 'c']);
    expect(byName.a).toMatchObject({ ai_allowed: true, timeout: 5, default_credential: false });
    expect(byName.c).toMatchObject({ default_credential: true });
  });

  it('refuses a patch that would break an invariant, changing nothing', async () => {
    const created = await (await call('POST', '', pgBody())).json();
    const only = created.credentials[0].id;
    const res = await call('PATCH', `/${created.id}`, {
      name: 'renamed',
      credentials: [{ id: only, delete: true }],
    });
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].path).toBe('credentials');
    expect((await (await call('GET', `/${created.id}`)).json()).name).toBe(created.name);
    const vsh = await call('PATCH', `/${created.id}`, { verify_server_hostname: true });
    expect((await vsh.json()).errors[0].path).toBe('verify_server_hostname');
  });

  it('DELETE returns the deleted object and removes credentials and grants', async () => {
    const created = await (await call('POST', '', pgBody())).json();
    const res = await call('DELETE', `/${created.id}`);
    expect(res.status).toBe(200);
    expect((await res.json()).id).toBe(created.id);
    expect((await call('GET', `/${created.id}`)).status).toBe(404);
    const creds = await svc.deps.sql`select 1 from credentials where database_id = ${created.id}`;
    expect(creds).toHaveLength(0);
    expect((await call('DELETE', `/${created.id}`)).status).toBe(404);
  });
});

describe('GET /api/v1/desk/databases (list)', () => {
  it('filters by group and pages with a cursor', async () => {
    for (const n of [1, 2, 3]) await call('POST', '', pgBody({ name: `paged-${n}`, group: 'paging' }));
    const first = await (await call('GET', '?group=paging&limit=2')).json();
    expect(first.data.map((d: { name: string }) => d.name)).toEqual(['paged-1', 'paged-2']);
    expect(first.next_cursor).toBeTruthy();
    const second = await (await call('GET', `?group=paging&limit=2&after=${first.next_cursor}`)).json();
    expect(second.data.map((d: { name: string }) => d.name)).toEqual(['paged-3']);
    expect(second.next_cursor).toBeNull();
    expect((await call('GET', '?limit=0')).status).toBe(422);
  });
});

describe('PUT /setup and DELETE /remove/:api_id', () => {
  const pg = () => servers().postgres;
  const setup = (extra: Record<string, unknown> = {}) =>
    call('PUT', '/setup', {
      id: 'terraform-orders',
      adapter: 'postgres',
      hostname: pg().host,
      port: pg().port,
      database: pg().database,
      username: pg().user,
      password: pg().password,
      ...extra,
    });

  it('creates once, then updates the same database; review_bypass_allowed reverts when omitted', async () => {
    const created = await (
      await setup({
        review_bypass_allowed: true,
        reviews_required: 2,
        ssl: 'enabled',
        ssl_ca_cert: b64(pg().tls.caCert),
      })
    ).json();
    expect(created).toMatchObject({
      api_id: 'terraform-orders',
      name: pg().database,
      review_bypass_allowed: true,
      ssl: true,
      ssl_ca_cert_configured: true,
    });
    expect(created.credentials).toEqual([
      expect.objectContaining({ username: pg().user, reviews_required: 2, default_credential: true }),
    ]);

    const updated = await (await setup({ name: 'Orders' })).json();
    expect(updated.id).toBe(created.id);
    expect(updated).toMatchObject({
      name: 'Orders',
      review_bypass_allowed: false,
      ssl: false,
      ssl_ca_cert_configured: false,
    });
    expect(updated.credentials).toHaveLength(1);
    expect(updated.credentials[0]).toMatchObject({ id: created.credentials[0].id, reviews_required: 0 });

    const removed = await call('DELETE', '/remove/terraform-orders');
    expect(removed.status).toBe(200);
    expect((await removed.json()).id).toBe(created.id);
    expect((await call('DELETE', '/remove/terraform-orders')).status).toBe(404);
  });

  it('validates setup like create', async () => {
    const res = await setup({ adapter: 'db2', ssl_cert: 'zzz' });
    expect(res.status).toBe(422);
    const paths = (await res.json()).errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['adapter', 'ssl_cert']));
  });
});

describe('GET /:id/check-connection/:username (SPEC.md 7)', () => {
  it('answers ok, the server message for a wrong password, and not found', async () => {
    const db = await (
      await call(
        'POST',
        '',
        pgBody({
          credentials: [
            { username: servers().postgres.user, password: servers().postgres.password },
            { username: 'ghost', password: 'wrong-password-123' },
          ],
        }),
      )
    ).json();
    const ok = await call('GET', `/${db.id}/check-connection/${servers().postgres.user}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await ok.text()).toBe('ok');

    const wrong = await call('GET', `/${db.id}/check-connection/ghost`);
    expect(wrong.status).toBe(200);
    const message = await wrong.text();
    expect(message).toMatch(/password authentication failed for user "ghost"/);
    expect(message).not.toContain('wrong-password-123');

    const unknownUser = await call('GET', `/${db.id}/check-connection/nobody`);
    expect(unknownUser.status).toBe(404);
    expect(await unknownUser.text()).toBe('not found');
    const unknownDb = await call('GET', '/db_01M7ZJQEWKV8HR45Y5E3J2CXXG/check-connection/x');
    expect(unknownDb.status).toBe(404);
    expect(await unknownDb.text()).toBe('not found');
  });

  it('works for MariaDB and ClickHouse too', async () => {
    const my = servers().mariadb;
    const mdb = await (
      await call('POST', '', {
        name: 'maria',
        adapter: 'mysql',
        hostname: my.host,
        port: my.port,
        database: my.database,
        credentials: [{ username: my.user, password: my.password }],
      })
    ).json();
    expect(await (await call('GET', `/${mdb.id}/check-connection/${my.user}`)).text()).toBe('ok');
    const ch = servers().clickhouse;
    const cdb = await (
      await call('POST', '', {
        name: 'clicks',
        adapter: 'clickhouse',
        hostname: ch.host,
        port: ch.httpPort,
        database: ch.database,
        credentials: [{ username: ch.user, password: ch.password }],
      })
    ).json();
    expect(await (await call('GET', `/${cdb.id}/check-connection/${ch.user}`)).text()).toBe('ok');
  });
});

describe('secrets stay secret', () => {
  it('no password, client key or certificate appears in any response or log line, even on errors', async () => {
    const pg = servers().postgres;
    const secretPassword = 'S3cret-Password-Never-Shown';
    const bodies: string[] = [];
    const keep = async (res: Response) => {
      const text = await res.text();
      bodies.push(text);
      return text;
    };
    const created = JSON.parse(
      await keep(
        await call(
          'POST',
          '',
          pgBody({
            ssl: true,
            ssl_ca_cert: b64(pg.tls.caCert),
            ssl_cert: b64(pg.tls.clientCert),
            ssl_key: b64(pg.tls.clientKey),
            credentials: [{ username: 'leaky', password: secretPassword }],
          }),
        ),
      ),
    );
    expect(created.ssl_client_cert_configured).toBe(true);
    await keep(await call('GET', `/${created.id}/check-connection/leaky`));
    await keep(
      await call('PATCH', `/${created.id}`, {
        credentials: [
          { username: 'x', password: secretPassword, default_credential: true },
          { username: 'x', password: secretPassword },
        ],
      }),
    );
    await keep(
      await call(
        'POST',
        '',
        pgBody({
          ssl_key: b64(pg.tls.clientKey),
          credentials: [{ username: 'y', password: secretPassword }],
        }),
      ),
    );
    await keep(await call('GET', `/${created.id}`));
    const everything = bodies.join('\n') + svc.logs.join('\n');
    expect(everything).not.toContain(secretPassword);
    expect(everything).not.toContain('PRIVATE KEY');
    expect(everything).not.toContain('BEGIN CERTIFICATE');
    expect(everything).not.toContain(b64(pg.tls.clientKey).slice(0, 40));
  });
});
