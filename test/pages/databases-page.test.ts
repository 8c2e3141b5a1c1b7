// An admin registers, checks, edits and deletes a database in the web
// UI — multipart forms with a CA certificate upload — through the same schemas as the REST API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };
let member: { cookie: string; csrf: string };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: 'db-page-member@example.test',
    role: 'member',
    password: 'member password 123',
  });
  member = await signIn(svc, 'db-page-member@example.test', 'member password 123');
});
afterAll(async () => svc?.stop());

function registration(fields: Record<string, string>, ca?: string): FormData {
  const form = new FormData();
  form.set('_csrf', admin.csrf);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  if (ca) form.set('ssl_ca_cert', new Blob([ca], { type: 'application/x-pem-file' }), 'ca.pem');
  return form;
}

const post = (path: string, body: FormData | URLSearchParams, who = admin) =>
  svc.fetch(path, { method: 'POST', headers: { cookie: who.cookie }, body, redirect: 'manual' });
const page = async (path: string, who = admin) => {
  const res = await svc.fetch(path, { headers: { cookie: who.cookie } });
  return { status: res.status, html: await res.text() };
};

describe('the Databases page', () => {
  let dbPath: string;

  it('shows an empty state that says what to do', async () => {
    const { status, html } = await page('/databases');
    expect(status).toBe(200);
    expect(html).toContain('Register one');
    expect(html).not.toContain('/v1/dashboards');
  });

  it('a registration missing its host and first user answers 422 under those fields and saves nothing', async () => {
    const res = await post(
      '/databases',
      registration({ name: 'broken', adapter: 'postgres', database: 'x', c0_password: 'p' }),
    );
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toMatch(/id="f-hostname-error"/);
    expect(html).toMatch(/id="f-c0_username-error"/);
    const [n] = await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from databases`;
    expect(n!.n).toBe(0);
  });

  it('a credential that does not connect is caught before save, with the server message and no password', async () => {
    const pg = servers().postgres;
    const res = await post(
      '/databases',
      registration({
        name: 'wrong-password',
        adapter: 'postgres',
        hostname: pg.host,
        port: String(pg.port),
        database: pg.database,
        c0_username: pg.user,
        c0_password: 'not-the-password-4242',
      }),
    );
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toMatch(/id="f-c0_password-error"[^>]*>[^<]*password authentication failed/);
    expect(html).not.toContain('not-the-password-4242');
    expect(html).toContain('name="save_anyway"');
    // What was typed comes back, the port included: a retry with the password typed again
    // connects where the first attempt did.
    expect(html).toMatch(new RegExp(`id="f-port"[^>]*value="${pg.port}"`));
    expect(html).toMatch(/id="f-hostname"[^>]*value="[^"]+"/);
    const [n] = await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from databases`;
    expect(n!.n).toBe(0);
  });

  it('a blank registration form starts restricted, with one review, and says who can query', async () => {
    const { html } = await page('/databases/new');
    expect(html).toMatch(/<input type="checkbox" name="restrict_access" checked/);
    expect(html).toMatch(/id="f-c0_reviews_required"[^>]*value="1"/);
    expect(html).toContain(`Only you (${svc.admin.email})`);
    expect(html).toContain('wait for 1 approval(s)');
  });

  it('registers a database over verified TLS with a reviewed and an unreviewed credential', async () => {
    const pg = servers().postgres;
    const res = await post(
      '/databases',
      registration(
        {
          name: 'shop',
          adapter: 'postgres',
          hostname: pg.tls.rightHostname,
          port: String(pg.port),
          database: pg.database,
          ssl: 'on',
          verify_server_hostname: 'on',
          group: 'sales',
          c0_username: pg.user,
          c0_password: pg.password,
          c0_reviews_required: '1',
          c1_username: `${pg.user}_ro`,
          c1_password: 'unused',
          c1_reviews_required: '0',
          c1_restrict_access: 'on',
          default_credential: '0',
          // The second credential's password is wrong on purpose (checked below).
          save_anyway: 'on',
        },
        pg.tls.caCert,
      ),
    );
    expect(res.status).toBe(303);
    dbPath = new URL(res.headers.get('location')!, svc.url).pathname;
    const { html } = await page(dbPath);
    expect(html).toContain(pg.user);
    expect(html).toContain('1 approval(s)');
    expect(html).toContain('no review');
    // The REST API sees exactly what the form registered.
    const api = await svc.fetch(`/api/v1/desk/databases/${dbPath.split('/').pop()}`, {
      headers: { 'x-api-key': svc.apiKey },
    });
    expect(await api.json()).toMatchObject({
      name: 'shop',
      ssl: true,
      verify_server_hostname: true,
      ssl_ca_cert_configured: true,
      group: 'sales',
      credentials: [
        { username: pg.user, reviews_required: 1, default_credential: true, restrict_access: false },
        { username: `${pg.user}_ro`, reviews_required: 0, restrict_access: true },
      ],
    });
    // The list shows it under its group.
    expect((await page('/databases?group=sales')).html).toContain('shop');
    expect((await page('/databases?group=other')).html).not.toContain('>shop<');
  });

  it('checks a credential: ok for the right one, the server message for the wrong one', async () => {
    const { html } = await page(dbPath);
    const ids = [...html.matchAll(/action="\/databases\/db_\w+\/credentials\/(crd_\w+)\/check"/g)].map(
      (m) => m[1]!,
    );
    const ok = await post(
      `${dbPath}/credentials/${ids[0]}/check`,
      new URLSearchParams({ _csrf: admin.csrf }),
    );
    expect(await ok.text()).toContain('Connected: ok.');
    const bad = await (
      await post(`${dbPath}/credentials/${ids[1]}/check`, new URLSearchParams({ _csrf: admin.csrf }))
    ).text();
    expect(bad).toMatch(/password authentication failed|does not exist/);
    expect(bad).not.toContain('unused');
  });

  it("a refused credential edit marks that credential's form, opened, and no other", async () => {
    const { html } = await page(dbPath);
    const ids = [...html.matchAll(/action="\/databases\/db_\w+\/credentials\/(crd_\w+)\/check"/g)].map(
      (m) => m[1]!,
    );
    const res = await post(
      `${dbPath}/credentials/${ids[0]}`,
      new URLSearchParams({ _csrf: admin.csrf, username: 'x', reviews_required: '-3' }),
    );
    expect(res.status).toBe(422);
    const body = await res.text();
    const invalid = [...body.matchAll(/id="f-([\w-]+)"[^>]*aria-invalid="true"/g)].map((m) => m[1]);
    expect(invalid).toEqual([`${ids[0]}-reviews_required`]);
    expect(body).toContain('must be from 0 to 20');
    // Its Edit section is open, the others' are not.
    const form = body.indexOf(`action="${dbPath}/credentials/${ids[0]}"`);
    expect(body.lastIndexOf('<details', form)).toBe(body.lastIndexOf('<details open=""', form));
    expect(body).not.toMatch(
      new RegExp(
        `<details open="">\\s*<summary>Edit</summary>\\s*<form method="post" action="${dbPath}/credentials/${ids[1]}"`,
      ),
    );
  });

  it('grants the restricted credential to a role from the page', async () => {
    const { html } = await page(dbPath);
    const restricted = [
      ...html.matchAll(/action="\/databases\/db_\w+\/credentials\/(crd_\w+)\/grants"/g),
    ].map((m) => m[1]!)[1]!;
    const res = await post(
      `${dbPath}/credentials/${restricted}/grants`,
      new URLSearchParams({ _csrf: admin.csrf, grantee: 'role:member' }),
    );
    expect(res.status).toBe(303);
    const [g] = await svc.deps.sql<
      { role: string }[]
    >`select role from credential_grants where credential_id = ${restricted}`;
    expect(g!.role).toBe('member');
  });

  it('members see the list but cannot register or manage', async () => {
    expect((await page('/databases', member)).status).toBe(200);
    expect((await page('/databases/new', member)).status).toBe(403);
    expect((await page(dbPath, member)).status).toBe(403);
    expect((await page(`${dbPath}/policies`, member)).status).toBe(403);
  });

  it('deletes only when the name is typed back', async () => {
    const wrong = await post(
      `${dbPath}/delete`,
      new URLSearchParams({ _csrf: admin.csrf, confirm: 'shops' }),
    );
    expect(decodeURIComponent(wrong.headers.get('location')!)).toContain('nothing was deleted');
    expect((await page(dbPath)).status).toBe(200);
    const right = await post(`${dbPath}/delete`, new URLSearchParams({ _csrf: admin.csrf, confirm: 'shop' }));
    expect(right.status).toBe(303);
    expect((await page(dbPath)).status).toBe(404);
  });
});
