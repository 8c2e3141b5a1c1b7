import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverAbandonedRequests } from '../../governance/maintenance.ts';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// A query request claimed for execution by a process that then died stays `executing`; the
// maintenance sweep settles it as failed and audits the interrupted attempt.
let svc: TestService;
let token: string;
let dbId: string;
beforeAll(async () => {
  svc = await startTestService();
  const org = await firstOrganization(svc.deps.sql);
  const author = await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: 'author@example.test',
    role: 'member',
    password: null,
  });
  token = (await createPersonalToken(svc.deps.sql, { userId: author.id, name: 't', expiresAt: null })).secret;
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'reviewed',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [{ username: pg.user, password: pg.password, reviews_required: 1, timeout: 5 }],
    }),
  });
  dbId = ((await res.json()) as { id: string }).id;
});
afterAll(async () => svc?.stop());

async function submit(): Promise<string> {
  const res = await svc.fetch('/api/v1/desk/query-requests', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ database_id: dbId, statement: 'select 1', params: [] }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { request: { id: string } }).request.id;
}

describe('abandoned query requests', () => {
  it('are settled as failed, audited, and the chain still verifies; live ones are left alone', async () => {
    const abandoned = await submit();
    const live = await submit();
    // What a crashed process leaves behind: claimed long ago, never settled.
    await svc.deps
      .sql`update query_requests set status = 'executing', updated_at = now() - interval '10 minutes' where id = ${abandoned}`;
    // Claimed a moment ago: still within its 5 s timeout plus grace.
    await svc.deps.sql`update query_requests set status = 'executing', updated_at = now() where id = ${live}`;

    expect(await recoverAbandonedRequests(svc.deps)).toBe(1);
    const get = async (id: string) =>
      (await (
        await svc.fetch(`/api/v1/desk/query-requests/${id}`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as {
        status: string;
        error: string | null;
      };
    const settled = await get(abandoned);
    expect(settled.status).toBe('failed');
    expect(settled.error).toMatch(/interrupted.*unknown/);
    expect((await get(live)).status).toBe('executing');

    const audit = (await (
      await svc.fetch(`/api/v1/audit?request_id=${abandoned}`, { headers: { 'x-api-key': svc.apiKey } })
    ).json()) as {
      data: Array<{ outcome: string; detail: string | null }>;
    };
    expect(audit.data.map((e) => e.outcome)).toContain('failed');
    expect(audit.data.find((e) => e.outcome === 'failed')?.detail).toMatch(/interrupted/);
    const verify = (await (
      await svc.fetch('/api/v1/audit/verify', { headers: { 'x-api-key': svc.apiKey } })
    ).json()) as { ok: boolean };
    expect(verify.ok).toBe(true);
    // A second sweep finds nothing more.
    expect(await recoverAbandonedRequests(svc.deps)).toBe(0);
  });
});
