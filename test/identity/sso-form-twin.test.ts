// The Organization page's SSO form and PUT /api/v1/sso share one schema, checked by setSsoConfig
// (identity/sso-input.ts): the same invalid settings get the same field errors through either
// door and store nothing; an empty client secret keeps the stored one through either door, and
// is refused by both while nothing is stored yet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let root: { cookie: string; csrf: string };
let password: string;

beforeAll(async () => {
  svc = await startTestService();
  password = svc.admin.password;
  root = await signIn(svc, svc.admin.email, password);
});
afterAll(async () => svc?.stop());

const decode = (s: string) =>
  s
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

/** PUT /api/v1/sso as the signed-in super admin: its status and each field error's message. */
async function rest(body: Record<string, unknown>): Promise<{ status: number; messages: string[] }> {
  const res = await svc.fetch('/api/v1/sso', {
    method: 'PUT',
    headers: { 'content-type': 'application/json', cookie: root.cookie, 'x-csrf-token': root.csrf },
    body: JSON.stringify({ current_password: password, ...body }),
  });
  const problem = (await res.json()) as { errors?: { path: string; message: string }[] };
  // The page shows one message per field, beside it.
  const seen = new Set<string>();
  const messages = (problem.errors ?? []).flatMap((e) => {
    const field = e.path.split('.')[0]!;
    if (seen.has(field)) return [];
    seen.add(field);
    return [e.message];
  });
  return { status: res.status, messages };
}

/** The form posted as the page sends it: its status and the messages shown beside the fields. */
async function form(fields: Record<string, string>): Promise<{ status: number; messages: string[] }> {
  const res = await svc.fetch('/organization/sso', {
    method: 'POST',
    headers: { cookie: root.cookie },
    body: new URLSearchParams({ _csrf: root.csrf, current_password: password, enabled: 'on', ...fields }),
    redirect: 'manual',
  });
  const html = res.status === 303 ? '' : await res.text();
  const messages = [...html.matchAll(/<div class="error small">([^<]*)<\/div>/g)].map((m) => decode(m[1]!));
  return { status: res.status, messages };
}

const storedSecret = async () =>
  (await svc.deps.sql<{ client_secret_enc: string }[]>`select client_secret_enc from sso_configs`)[0]
    ?.client_secret_enc;

describe('the SSO form and PUT /api/v1/sso', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    {
      name: 'not an issuer URL and no client id',
      json: { issuer: 'not a url', client_id: '', client_secret: 's' },
      form: { issuer: 'not a url', client_id: '', client_secret: 's' },
    },
    {
      name: 'a bad claim name and a bad domain',
      json: {
        issuer: 'https://idp.example.test',
        client_id: 'c',
        client_secret: 's',
        role_claim: 'has space',
        domains: ['not a domain'],
      },
      form: {
        issuer: 'https://idp.example.test',
        client_id: 'c',
        client_secret: 's',
        role_claim: 'has space',
        domains: 'not a domain',
      },
    },
    {
      name: 'a claim value mapped to no such role',
      json: {
        issuer: 'https://idp.example.test',
        client_id: 'c',
        client_secret: 's',
        role_map: { ops: 'owner' },
      },
      form: {
        issuer: 'https://idp.example.test',
        client_id: 'c',
        client_secret: 's',
        role_map: 'ops = owner',
      },
    },
    {
      name: 'no secret while none is stored',
      json: { issuer: 'https://idp.example.test', client_id: 'c' },
      form: { issuer: 'https://idp.example.test', client_id: 'c', client_secret: '' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const r = await rest(c.json);
      expect(r.status).toBe(422);
      expect(r.messages.length).toBeGreaterThan(0);
      expect(await form(c.form)).toEqual(r);
    });

  it('stored nothing', async () => {
    expect(await storedSecret()).toBeUndefined();
  });

  it('keeps the stored secret when either door sends none', async () => {
    const first = await rest({
      issuer: 'https://idp.example.test',
      client_id: 'c',
      client_secret: 'first secret',
    });
    expect(first.status).toBe(200);
    const sealed = await storedSecret();
    expect(sealed).toBeDefined();

    const page = await form({ issuer: 'https://idp.example.test', client_id: 'c2', client_secret: '' });
    expect(page.status).toBe(303);
    expect(await storedSecret()).toBe(sealed);

    const api = await rest({ issuer: 'https://idp.example.test', client_id: 'c3' });
    expect(api.status).toBe(200);
    expect(await storedSecret()).toBe(sealed);
    const [row] = await svc.deps.sql<{ client_id: string }[]>`select client_id from sso_configs`;
    expect(row!.client_id).toBe('c3');
    // The secret never travels back, sealed or not.
    const shown = await svc.fetch('/api/v1/sso', { headers: { cookie: root.cookie } });
    expect(await shown.text()).not.toContain('first secret');
  });
});
