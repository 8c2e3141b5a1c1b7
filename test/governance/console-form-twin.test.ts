// The console's save form and POST /api/v1/saved-queries share one schema, checked by saveQuery
// (workspace/saved-queries.ts SavedQueryInput): the same invalid input gets the same field errors
// through either door, and saves nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let admin: { cookie: string; csrf: string };

beforeAll(async () => {
  svc = await startTestService();
  admin = await signIn(svc, svc.admin.email, svc.admin.password);
});
afterAll(async () => svc?.stop());

describe('the save form and POST /api/v1/saved-queries', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    {
      name: 'no name',
      json: { name: '  ', statement: 'select 1' },
      form: { name: '  ', statement: 'select 1' },
    },
    {
      name: 'a name too long',
      json: { name: 'twin-'.repeat(41), statement: 'select 1' },
      form: { name: 'twin-'.repeat(41), statement: 'select 1' },
    },
    {
      name: 'blank SQL',
      json: { name: 'twin-blank', statement: '  \n ' },
      form: { name: 'twin-blank', statement: '  \n ' },
    },
    {
      name: 'not a database id',
      json: { name: 'twin-db', statement: 'select 1', database_id: 'nope' },
      form: { name: 'twin-db', statement: 'select 1', credential: 'nope/crd_x' },
    },
    {
      name: 'no name and no SQL',
      json: { name: '', statement: '' },
      form: { name: '', statement: '' },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const res = await svc.fetch('/api/v1/saved-queries', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: admin.cookie, 'x-csrf-token': admin.csrf },
        body: JSON.stringify(c.json),
      });
      expect(res.status).toBe(422);
      const problem = (await res.json()) as { detail: string; errors: { path: string }[] };
      expect(problem.errors.length).toBeGreaterThan(0);

      const page = await svc.fetch('/console/saved', {
        method: 'POST',
        headers: { cookie: admin.cookie },
        body: new URLSearchParams({ _csrf: admin.csrf, ...c.form }),
        redirect: 'manual',
      });
      expect(page.status).toBe(303);
      const to = new URL(page.headers.get('location') ?? '', 'http://page.invalid');
      expect(to.searchParams.get('error')).toBe(problem.detail);
    });

  it('saved nothing', async () => {
    const rows = await svc.deps.sql`select 1 from saved_queries where name like 'twin%' or name = ''`;
    expect(rows.length).toBe(0);
  });
});
