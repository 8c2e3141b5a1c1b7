import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../audit/events.ts';
import { type AuditJson, json, type Person, startWorld, type World } from './world.ts';

let w: World;
let member: Person;
let pg: { id: string };

beforeAll(async () => {
  w = await startWorld();
  member = await w.person('member', 'member');
  pg = await w.database('postgres');
});
afterAll(async () => w?.stop());

const query = (statement: string, params: unknown[] = [], databaseId = pg.id) =>
  w.as(member, 'POST', '/api/v1/desk/query-requests', { database_id: databaseId, statement, params });
async function count(): Promise<number> {
  const [row] = await w.svc.deps.sql<
    { n: number }[]
  >`select count(*)::int as n from audit_log where org_id = ${w.orgId}`;
  return row!.n;
}

describe('audit log: one entry per attempt, hash-chained', () => {
  it('holds exactly one entry per query under 200 concurrent queries, and the chain verifies', async () => {
    const before = await count();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        // Allowed, failed (server error) and denied (no such database) attempts, interleaved.
        i % 10 === 0
          ? query('select * from no_such_table_at_all')
          : i % 10 === 1
            ? query('select 1', [], 'db_01J00000000000000000000000')
            : query(`select name from ${w.table} where id = $1`, [(i % 3) + 1]),
      ).map((p) => p.then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(160);
    expect(statuses.filter((s) => s === 422)).toHaveLength(20);
    expect(statuses.filter((s) => s === 404)).toHaveLength(20);
    expect((await count()) - before).toBe(200);
    const report = await verifyAuditChain(w.svc.deps.sql, w.orgId);
    expect(report).toMatchObject({ ok: true, broken: null });
    expect(report.entries).toBe(await count());
    const [seqs] = await w.svc.deps.sql<{ n: number; max: string }[]>`
      select count(distinct seq)::int as n, max(seq)::text as max from audit_log where org_id = ${w.orgId}`;
    expect(seqs).toEqual({ n: await count(), max: String(await count()) });
  });

  it('is searchable by actor, origin, database, outcome and time', async () => {
    const since = new Date().toISOString();
    await query(`select id from ${w.table} where id = $1`, [2]);
    const search = async (q: string) =>
      json<{ data: AuditJson[]; next_cursor: string | null }>(await w.as('key', 'GET', `/api/v1/audit?${q}`));
    const recent = await search(
      `from=${encodeURIComponent(since)}&actor=${member.id}&origin=user&database_id=${pg.id}`,
    );
    expect(recent.data).toHaveLength(1);
    expect(recent.data[0]).toMatchObject({
      outcome: 'allowed',
      statement: `select id from ${w.table} where id = $1`,
      params: [2],
      rows_returned: 1,
      classification: 'read',
      actor: { kind: 'user', user_id: member.id, api_key_id: null },
    });
    expect(
      (await search(`to=${encodeURIComponent(since)}&actor=${member.id}&limit=500`)).data.length,
    ).toBeGreaterThanOrEqual(200);
    expect((await search('origin=workflow')).data).toEqual([]);
    // Free text matches the statement literally and case-insensitively (no LIKE wildcards).
    const byText = await search(`q=${encodeURIComponent('WHERE ID = $1')}&from=${encodeURIComponent(since)}`);
    expect(byText.data.map((e) => e.statement)).toEqual([`select id from ${w.table} where id = $1`]);
    expect((await search(`q=${encodeURIComponent('%')}&from=${encodeURIComponent(since)}`)).data).toEqual([]);
    expect((await search('outcome=denied&limit=5')).data.every((e) => e.outcome === 'denied')).toBe(true);
    // Keyset pages cover everything once.
    const first = await search('limit=150');
    const second = await search(`limit=150&cursor=${first.next_cursor}`);
    const ids = new Set([...first.data, ...second.data].map((e) => e.id));
    expect(ids.size).toBe(await count());
    expect(second.next_cursor).toBeNull();
    expect((await w.as('key', 'GET', '/api/v1/audit?from=yesterday')).status).toBe(422);
  });

  it('is for admins only', async () => {
    expect((await w.as(member, 'GET', '/api/v1/audit')).status).toBe(403);
    expect((await w.svc.fetch('/api/v1/audit')).status).toBe(401);
  });

  it('exports NDJSON and CSV', async () => {
    const nd = await w.as('key', 'GET', `/api/v1/audit/export?database_id=${pg.id}`);
    expect(nd.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await nd.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditJson);
    const [inDb] = await w.svc.deps.sql<
      { n: number }[]
    >`select count(*)::int as n from audit_log where database_id = ${pg.id}`;
    expect(lines).toHaveLength(inDb!.n);
    expect(lines.map((l) => l.seq)).toEqual([...lines.map((l) => l.seq)].sort((a, b) => a - b));

    const csv = await w.as('key', 'GET', '/api/v1/audit/export?format=csv&outcome=failed');
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const text = await csv.text();
    const [header, ...records] = text.trimEnd().split('\r\n');
    expect(header?.startsWith('id,seq,occurred_at,actor_kind')).toBe(true);
    expect(records).toHaveLength(20);
    expect(records[0]).toContain('select * from no_such_table_at_all');
  });
});

describe('audit log: append-only and tamper-evident', () => {
  it('refuses UPDATE, DELETE and TRUNCATE in the database itself', async () => {
    const sql = w.svc.deps.sql;
    await expect(sql`update audit_log set outcome = 'allowed' where org_id = ${w.orgId}`).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`delete from audit_log where org_id = ${w.orgId}`).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_log`).rejects.toThrow(/append-only/);
    expect((await verifyAuditChain(sql, w.orgId)).ok).toBe(true);
  });

  it('detects an entry altered behind the trigger’s back, in the API and in `countersign verify-audit`', async () => {
    const sql = w.svc.deps.sql;
    expect(await verifyCli()).toMatchObject({ code: 0 });
    const [victim] = await sql<{ seq: string }[]>`
      select seq::text from audit_log where org_id = ${w.orgId} and outcome = 'denied' order by seq limit 1`;
    // The store's owner can switch the trigger off; the chain still tells.
    await sql.begin(async (tx) => {
      await tx`alter table audit_log disable trigger audit_log_append_only`;
      await tx`update audit_log set outcome = 'allowed', detail = null where org_id = ${w.orgId} and seq = ${victim!.seq}::bigint`;
      await tx`alter table audit_log enable trigger audit_log_append_only`;
    });
    const report = await verifyAuditChain(sql, w.orgId);
    expect(report.ok).toBe(false);
    expect(report.broken).toMatchObject({ seq: victim!.seq, reason: expect.stringContaining('altered') });
    expect(await json(await w.as('key', 'GET', '/api/v1/audit/verify'))).toMatchObject({
      ok: false,
      broken: { seq: victim!.seq },
    });
    const cli = await verifyCli();
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain(`BROKEN at seq ${victim!.seq}`);
  });
});

/** Runs `countersign verify-audit` against the test store, as an operator would. */
function verifyCli(): Promise<{ code: number | null; stdout: string }> {
  const bin = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'verify-audit'], {
      env: { PATH: process.env.PATH, DATABASE_URL: w.svc.deps.config.databaseUrl ?? '', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}
