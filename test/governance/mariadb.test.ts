import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GovernanceDeps, runGovernedQuery } from '../../governance/query.ts';
import {
  type AuditJson,
  json,
  type Person,
  type RequestJson,
  type SubmitJson,
  startWorld,
  type World,
} from './world.ts';

let w: World;
let author: Person;
let reviewer: Person;
let reviewed: { id: string };
let direct: { id: string };
let gov: GovernanceDeps;

beforeAll(async () => {
  w = await startWorld();
  author = await w.person('member', 'author');
  reviewer = await w.person('member', 'reviewer');
  reviewed = await w.database('mariadb', {}, 1);
  direct = await w.database('mariadb', { ai_enabled: true, ai_max_rows: 2 }, 0, { ai_allowed: true });
  const { sql, keyring, logger, pools } = w.svc.deps;
  gov = { sql, keyring, logger, pools };
});
afterAll(async () => w?.stop());

const base = '/api/v1/desk/query-requests';
async function audit(query: string): Promise<AuditJson[]> {
  return (await json<{ data: AuditJson[] }>(await w.as('key', 'GET', `/api/v1/audit?${query}`))).data;
}

describe('query requests on MariaDB', () => {
  it('runs at once when no review is required, with bound parameters', async () => {
    const res = await w.as(author, 'POST', base, {
      database_id: direct.id,
      statement: `select name from ${w.table} where id = ?`,
      params: [3],
    });
    expect(res.status).toBe(200);
    expect((await json<SubmitJson>(res)).result?.rows).toEqual([['c']]);
  });

  it('goes through the review life cycle: pending, self-approval refused, edit voids, approve, run', async () => {
    const submitted = await json<SubmitJson>(
      await w.as(author, 'POST', base, {
        database_id: reviewed.id,
        statement: `update ${w.table} set name = ? where id = ?`,
        params: ['z', 1],
      }),
    );
    expect(submitted.request).toMatchObject({ status: 'pending', classification: 'write' });
    const id = submitted.request!.id;
    expect((await w.as(author, 'POST', `${base}/${id}/approve`, {})).status).toBe(403);
    await w.as(reviewer, 'POST', `${base}/${id}/approve`, {});
    const edited = await json<RequestJson>(
      await w.as(author, 'PATCH', `${base}/${id}`, {
        statement: `update ${w.table} set name = ? where id = ? and name <> 'z'`,
      }),
    );
    expect(edited).toMatchObject({ status: 'pending', revision: 2, approvals: { count: 0 } });
    await w.as(reviewer, 'POST', `${base}/${id}/approve`, {});
    const ran = await json<SubmitJson>(await w.as(author, 'POST', `${base}/${id}/run`, {}));
    expect(ran.request).toMatchObject({ status: 'executed', result: { num_rows: 1 } });
    const check = await json<SubmitJson>(
      await w.as(author, 'POST', base, {
        database_id: direct.id,
        statement: `select name from ${w.table} where id = 1`,
      }),
    );
    expect(check.result?.rows).toEqual([['z']]);
    const entries = await audit(`request_id=${id}`);
    expect(entries.map((e) => e.outcome).sort()).toEqual(['allowed', 'pending']);
    expect(entries.find((e) => e.outcome === 'allowed')?.params).toEqual(['z', 1]);
  });

  it('audits a statement the server rejects as failed', async () => {
    const res = await w.as(author, 'POST', base, {
      database_id: direct.id,
      statement: 'select * from no_such_table_here',
    });
    expect(res.status).toBe(422);
    const [entry] = await audit(`outcome=failed&database_id=${direct.id}`);
    expect(entry).toMatchObject({ statement: 'select * from no_such_table_here', classification: 'read' });
    expect(entry?.detail).toContain('no_such_table_here');
  });
});

describe('access and bypass on MariaDB', () => {
  it('answers 404 to a user without a grant on a restricted database, and serves them once granted', async () => {
    const restricted = await w.database('mariadb', { restrict_access: true });
    const ask = () =>
      w.as(reviewer, 'POST', base, {
        database_id: restricted.id,
        statement: `select name from ${w.table} where id = 3`,
      });
    expect((await ask()).status).toBe(404);
    await w.as('key', 'POST', `/api/v1/desk/databases/${restricted.id}/grants`, { user_id: reviewer.id });
    expect((await json<SubmitJson>(await ask())).result?.rows).toEqual([['c']]);
  });

  it('lets a super admin bypass with acknowledgment only where the database allows it', async () => {
    const allowing = await w.database('mariadb', { review_bypass_allowed: true }, 2);
    const statement = `select name from ${w.table} where id = ?`;
    const without = await w.as(w.root, 'POST', base, {
      database_id: allowing.id,
      statement,
      params: [2],
      bypass_review: {},
    });
    expect(without.status).toBe(403);
    const ok = await w.as(w.root, 'POST', base, {
      database_id: allowing.id,
      statement,
      params: [2],
      bypass_review: { acknowledge_override: true },
    });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({
      request: { bypass: { bypassed: true } },
      result: { rows: [['b']] },
    });
    const strictDb = await w.database('mariadb', {}, 1);
    const refused = await w.as(w.root, 'POST', base, {
      database_id: strictDb.id,
      statement,
      params: [2],
      bypass_review: { acknowledge_override: true },
    });
    expect(refused.status).toBe(403);
  });
});

describe('AI origin (DESIGN.md pipeline step 2)', () => {
  const actor = () => ({
    kind: 'user' as const,
    userId: author.id,
    role: 'member' as const,
    oauthClient: { id: 'cli_test', name: 'Test Agent' },
  });

  it('reads, capped at ai_max_rows, and is labeled with the OAuth client', async () => {
    const out = await runGovernedQuery(gov, {
      orgId: w.orgId,
      actor: actor(),
      origin: 'ai',
      databaseId: direct.id,
      statement: `select id from ${w.table} order by id`,
      params: [],
    });
    expect(out.result.rows).toHaveLength(2);
    expect(out.result.truncated).toBe(true);
    const [entry] = await audit('origin=ai&outcome=allowed');
    expect(entry).toMatchObject({
      origin: 'ai',
      ai_originated: true,
      ai_client: { id: 'cli_test', name: 'Test Agent' },
    });
  });

  it('may not write unless a policy allows it', async () => {
    const write = {
      orgId: w.orgId,
      actor: actor(),
      origin: 'ai' as const,
      databaseId: direct.id,
      statement: `delete from ${w.table} where id = 99`,
      params: [],
    };
    await expect(runGovernedQuery(gov, write)).rejects.toMatchObject({ status: 403 });
    const [entry] = await audit('origin=ai&outcome=denied');
    expect(entry?.classification).toBe('write');
    const permissive = { ...gov, policy: { aiMayWrite: async () => true } };
    await expect(runGovernedQuery(permissive, write)).resolves.toMatchObject({ status: 'executed' });
  });

  it('is refused on a database without ai_enabled', async () => {
    await expect(
      runGovernedQuery(gov, {
        orgId: w.orgId,
        actor: actor(),
        origin: 'ai',
        databaseId: reviewed.id,
        statement: 'select 1',
        params: [],
      }),
    ).rejects.toMatchObject({ status: 403 });
  });
});
