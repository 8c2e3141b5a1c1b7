// Group commit of audit appends (store/audit-writer.ts) on a real PostgreSQL store:
// batching must not change the chain — one gap-free chain per organization that
// verifyAuditChain accepts, each caller told the place of its own entry — and must fail exactly
// the callers whose entries were not written.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyText } from '../../audit/chain.ts';
import { type AuditAttempt, bodyOf, recordAttempt, verifyAuditChain } from '../../audit/events.ts';
import { AUDIT_BODY_COLUMNS, type AuditInsert } from '../../store/audit.ts';
import { appendGrouped, appendNow, isPool } from '../../store/audit-writer.ts';
import { auditLaneOf, openStore, type Sql } from '../../store/db.ts';
import { newId } from '../../store/ids.ts';
import { migrate } from '../../store/migrate.ts';
import { insertOrganization } from '../../store/users.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';

let store: TestStore;
// Two pools on one store, as two service processes would have.
let a: Sql;
let b: Sql;
/** The audit batches each pool sent, in order: how, and the ids of their entries. */
interface Sent {
  /** audit_append (or its one-entry statement), or built on the head the pool knew. */
  via: 'append' | 'head';
  ids: string[];
}
const batches = new Map<Sql, Sent[]>();
const sizes = (sql: Sql) => batches.get(sql)!.map((b) => b.ids.length);
const isBodies = (x: unknown) => Array.isArray(x) && String(x[0]).startsWith('{');
const idsOf = (bodies: unknown) =>
  [bodies as string | string[]].flat().map((b) => JSON.parse(b).id as string);

function pool(url: string): Sql {
  const sent: Sent[] = [];
  const sql = postgres(url, {
    max: 4,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    debug: (_conn, query, params) => {
      // A batch of several calls audit_append; a batch of one is a single statement of its own;
      // a batch on a known head (store/audit-head.ts) binds its bodies as one of its arrays.
      if (query.includes('from audit_append(')) sent.push({ via: 'append', ids: idsOf(params[1]) });
      else if (query.includes('from head, jsonb_populate_record('))
        sent.push({ via: 'append', ids: idsOf(params[1]) });
      else if (query.includes('as b(body, seq, prev, hash)'))
        sent.push({ via: 'head', ids: idsOf(params.find(isBodies)) });
    },
  }) as unknown as Sql;
  batches.set(sql, sent);
  return sql;
}

beforeAll(async () => {
  store = await createTestStore();
  a = pool(store.url);
  b = pool(store.url);
  await migrate(a);
});
afterAll(async () => {
  await a?.end();
  await b?.end();
  await store?.drop();
});

async function newOrg(): Promise<string> {
  return (await insertOrganization(a, { id: newId('org'), name: 'audit batch' })).id;
}

const attempt = (orgId: string, i: number): AuditAttempt => ({
  orgId,
  actor: { kind: 'api_key', apiKeyId: 'key_bench' },
  origin: 'ai',
  databaseId: null,
  credentialId: null,
  statement: 'select $1, $2',
  // Quotes, backslashes and non-ASCII travel inside the text[] of bodies and must hash as sent.
  params: [i, `"quoted" \\ back ${'é'.repeat(i % 3)}`],
  classification: 'read',
  outcome: 'allowed',
  rowsReturned: 1,
  durationMs: 0.4,
});

async function stored(sql: Sql, ids: string[]): Promise<Map<string, { seq: bigint; org_id: string }>> {
  const rows = await sql<{ id: string; seq: bigint; org_id: string }[]>`
    select id, seq, org_id from audit_log where id = any(${ids}::text[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

async function seqs(orgId: string): Promise<bigint[]> {
  const rows = await a<{ seq: bigint }[]>`select seq from audit_log where org_id = ${orgId} order by seq`;
  return rows.map((r) => r.seq);
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => BigInt(i + 1));

/**
 * Each caller told a place finds its entry there, and the organization's chain is seq 1..n
 * without a gap and verifies.
 */
async function expectChain(
  orgId: string,
  settled: PromiseSettledResult<Awaited<ReturnType<typeof recordAttempt>>>[],
  n: number,
): Promise<void> {
  const ok = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const rows = await stored(
    a,
    ok.map((r) => r.id),
  );
  for (const r of ok) expect(rows.get(r.id)?.seq).toBe(r.seq);
  expect(await seqs(orgId)).toEqual(oneTo(n));
  expect(await verifyAuditChain(a, orgId)).toMatchObject({ entries: n, ok: true });
}

describe('audit group commit', () => {
  it('300 concurrent appends from two pools make one gap-free chain; each caller gets its own seq', async () => {
    const org = await newOrg();
    batches.get(a)!.length = 0;
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => recordAttempt(i % 2 ? a : b, attempt(org, i))),
    );
    const rows = await stored(
      a,
      results.map((r) => r.id),
    );
    for (const r of results) expect(rows.get(r.id)?.seq).toBe(r.seq);
    expect(await seqs(org)).toEqual(oneTo(300));
    expect(await verifyAuditChain(a, org)).toEqual({ orgId: org, entries: 300, ok: true, broken: null });
    // Pool a's first entry went alone at once; the ones that arrived while it was in flight
    // went together. A batch built on a head that pool b had moved meanwhile wrote nothing and
    // went again, through audit_append, right after: every other batch wrote each entry once.
    const sent = batches.get(a)!;
    expect(sent[0]).toMatchObject({ via: 'append', ids: [expect.any(String)] });
    const retried = (x: Sent, i: number) =>
      x.via === 'head' && sent[i + 1]?.via === 'append' && sent[i + 1]!.ids.join() === x.ids.join();
    const written = sent.filter((x, i) => !retried(x, i)).flatMap((x) => x.ids);
    expect(written).toHaveLength(150);
    expect(new Set(written).size).toBe(150);
    expect(Math.max(...sent.map((x) => x.ids.length))).toBeGreaterThan(1);
  });

  it('two organizations appending at once keep separate chains', async () => {
    const [x, y] = [await newOrg(), await newOrg()];
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => recordAttempt(i % 3 ? a : b, attempt(i % 2 ? x : y, i))),
    );
    const rows = await stored(
      a,
      results.map((r) => r.id),
    );
    results.forEach((r, i) => {
      expect(rows.get(r.id)).toEqual({ id: r.id, seq: r.seq, org_id: i % 2 ? x : y });
    });
    expect(await seqs(x)).toEqual(oneTo(60));
    expect(await seqs(y)).toEqual(oneTo(60));
    expect(await verifyAuditChain(a, x)).toMatchObject({ entries: 60, ok: true });
    expect(await verifyAuditChain(a, y)).toMatchObject({ entries: 60, ok: true });
  });

  it('a bad entry in a batch fails only its own caller; the others are written', async () => {
    const org = await newOrg();
    batches.get(a)!.length = 0;
    const settled = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        // The check constraint on outcome refuses entry 10.
        recordAttempt(a, i === 10 ? { ...attempt(org, i), outcome: 'bogus' as never } : attempt(org, i)),
      ),
    );
    // Entry 0 went alone; 1..19 arrived during it and went as one batch, which was refused whole.
    expect(sizes(a).slice(0, 2)).toEqual([1, 19]);
    expect(settled.map((s) => s.status)).toEqual(
      Array.from({ length: 20 }, (_, i) => (i === 10 ? 'rejected' : 'fulfilled')),
    );
    expect((settled[10] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    await expectChain(org, settled, 19);
  });

  it('an organization without a chain head fails its callers only', async () => {
    const org = await newOrg();
    const settled = await Promise.allSettled([
      recordAttempt(a, attempt('org_without_head', 0)),
      recordAttempt(a, attempt(org, 1)),
      recordAttempt(a, attempt('org_without_head', 2)),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason.message).toMatch(/has no audit chain head/);
    expect(await seqs(org)).toEqual([1n]);
  });

  it('refuses an entry of another organization, alone or in a batch, and leaves the head alone', async () => {
    const [x, y] = [await newOrg(), await newOrg()];
    await recordAttempt(a, attempt(x, 0));
    const foreign = (id: string) => ({ id, body: JSON.stringify({ id, org_id: y, outcome: 'allowed' }) });
    await expect(appendNow(a, x, [foreign('aud_foreign_1')])).rejects.toThrow(/not its own/);
    await expect(appendNow(a, x, [foreign('aud_foreign_2'), foreign('aud_foreign_3')])).rejects.toThrow(
      /another organization/,
    );
    expect(await a`select 1 from audit_log where id like 'aud_foreign_%'`).toHaveLength(0);
    expect((await recordAttempt(b, attempt(x, 1))).seq).toBe(2n);
    expect(await verifyAuditChain(a, x)).toMatchObject({ entries: 2, ok: true });
  });

  it('an append inside a transaction is undone by its rollback, leaving no entry and no gap', async () => {
    const org = await newOrg();
    await recordAttempt(a, attempt(org, 0));
    let inside: { id: string; seq: bigint } | undefined;
    await expect(
      a.begin(async (tx) => {
        inside = await recordAttempt(tx, attempt(org, 1));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(inside?.seq).toBe(2n);
    expect((await stored(a, [inside!.id])).size).toBe(0);
    // The rollback took the seq back with the entry: the next entries are 2 and 3.
    const committed = await a.begin((tx) => recordAttempt(tx, attempt(org, 2)));
    const after = await recordAttempt(b, attempt(org, 3));
    expect([committed.seq, after.seq]).toEqual([2n, 3n]);
    expect(await seqs(org)).toEqual(oneTo(3));
    expect(await verifyAuditChain(a, org)).toMatchObject({ entries: 3, ok: true });
  });

  it('builds on the head it saw; appends elsewhere in between (another pool, a transaction) leave one chain', async () => {
    const org = await newOrg();
    const sent = batches.get(a)!;
    sent.length = 0;
    await recordAttempt(a, attempt(org, 0));
    const second = await recordAttempt(a, attempt(org, 1));
    // The second entry was hashed here and written on the head the first one left.
    expect(sent.map((x) => x.via)).toEqual(['append', 'head']);
    expect(second.seq).toBe(2n);
    await recordAttempt(b, attempt(org, 2));
    await a.begin((tx) => recordAttempt(tx, attempt(org, 3)));
    // Pool a's head is two entries old now: its next batch writes nothing there and goes again.
    const fifth = await recordAttempt(a, attempt(org, 4));
    // (The third statement is the transaction's, on one of pool a's connections.)
    expect(sent.map((x) => x.via)).toEqual(['append', 'head', 'append', 'head', 'append']);
    expect(sent[3]!.ids).toEqual([fifth.id]);
    expect(sent[4]!.ids).toEqual([fifth.id]);
    expect(fifth.seq).toBe(5n);
    expect(await seqs(org)).toEqual(oneTo(5));
    expect(await verifyAuditChain(a, org)).toMatchObject({ entries: 5, ok: true });
  });

  it('on a known head too, refuses an entry of another organization and leaves the head alone', async () => {
    const [x, y] = [await newOrg(), await newOrg()];
    await recordAttempt(a, attempt(x, 0));
    const body = JSON.stringify({ id: 'aud_foreign_head', org_id: y, outcome: 'allowed' });
    await expect(appendGrouped(a, x, { id: 'aud_foreign_head', body })).rejects.toThrow(/not its own/);
    expect(
      batches
        .get(a)!
        .slice(-2)
        .map((s) => s.via),
    ).toEqual(['head', 'append']);
    expect(await a`select 1 from audit_log where id = 'aud_foreign_head'`).toHaveLength(0);
    expect((await recordAttempt(b, attempt(x, 1))).seq).toBe(2n);
    expect(await verifyAuditChain(a, x)).toMatchObject({ entries: 2, ok: true });
  });

  it('refuses a value outside each closed vocabulary on every append path, and writes nothing', async () => {
    // A whole entry, as the verifier rebuilds it from the stored columns.
    const entry = (org: string, id: string, change: Partial<Record<keyof AuditInsert, unknown>> = {}) => ({
      id,
      body: bodyText(
        bodyOf({
          ...(Object.fromEntries(AUDIT_BODY_COLUMNS.map((k) => [k, null])) as unknown as AuditInsert),
          id,
          org_id: org,
          occurred_at: new Date(),
          actor_kind: 'api_key',
          actor_api_key_id: 'key_vocabulary',
          origin: 'ai',
          statement: 'select 1',
          params: [],
          classification: 'read',
          outcome: 'allowed',
          approved_by: [],
          bypassed: false,
          event: 'query',
          subject: null,
          ...(change as Partial<AuditInsert>),
        }),
      ),
    });
    const bogus = [
      { actor_kind: 'robot' },
      { origin: 'email' },
      { classification: 'ddl' },
      { outcome: 'maybe' },
    ];
    for (const [i, change] of bogus.entries()) {
      const org = await newOrg();
      // The same body with its values kept is written: what is refused below is the one value.
      await appendNow(a, org, [entry(org, `aud_vocabulary_${i}_ok`)]);
      await expect(
        appendNow(a, org, [entry(org, `aud_vocabulary_${i}_alone`, change)]),
      ).rejects.toMatchObject({
        code: '23514',
      });
      const pair = [entry(org, `aud_vocabulary_${i}_first`), entry(org, `aud_vocabulary_${i}_batch`, change)];
      await expect(appendNow(a, org, pair)).rejects.toMatchObject({ code: '23514' });
      // Pool a learns the head, then builds the bad entry's batch on it.
      await recordAttempt(a, attempt(org, 1));
      const sent = batches.get(a)!;
      sent.length = 0;
      await expect(
        appendGrouped(a, org, entry(org, `aud_vocabulary_${i}_head`, change)),
      ).rejects.toMatchObject({
        code: '23514',
      });
      expect(sent.map((x) => x.via)).toEqual(['head', 'append']);
      expect(await a`select id from audit_log where org_id = ${org} order by seq`).toEqual([
        { id: `aud_vocabulary_${i}_ok` },
        expect.objectContaining({ id: expect.stringMatching(/^aud_/) }),
      ]);
      expect((await recordAttempt(b, attempt(org, 2))).seq).toBe(3n);
      expect(await verifyAuditChain(a, org)).toMatchObject({ entries: 3, ok: true });
    }
  });

  it('batches on root pools only, not on a transaction or a reserved connection', async () => {
    expect(isPool(a)).toBe(true);
    expect(await a.begin(async (tx) => isPool(tx))).toBe(false);
    const reserved = await a.reserve();
    expect(isPool(reserved)).toBe(false);
    reserved.release();
  });

  describe("a store pool's audit connection", () => {
    const POLL = { timeout: 10_000 };
    /** The server processes of audit connections in this database, and what each is doing. */
    const laneBackends = () =>
      a<{ pid: number; query: string; waiting: boolean }[]>`
        select pid, query, wait_event_type = 'Lock' as waiting from pg_stat_activity
        where application_name = 'countersign-audit' and datname = current_database()`;
    /** A store pool whose audit connection has answered its probe (started by a first append). */
    async function poolWithLane(org: string): Promise<Sql> {
      const pool = openStore(store.url, { max: 3 });
      await recordAttempt(pool, attempt(org, 0));
      await expect.poll(() => auditLaneOf(pool)?.up, POLL).toBe(true);
      return pool;
    }
    /** Holds `orgId`'s chain head locked in a transaction of its own until `release` is called. */
    async function holdHead(orgId: string): Promise<{ release(): Promise<void> }> {
      const holder = postgres(store.url, { max: 1, onnotice: () => {} });
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => {
        locked = r;
      });
      const tx = holder.begin(async (t) => {
        await t`select 1 from audit_heads where org_id = ${orgId} for update`;
        locked();
        await released;
      });
      await isLocked;
      return {
        async release() {
          release();
          await tx;
          await holder.end();
        },
      };
    }
    /** Until the audit connection's statement waits for the head's lock. */
    const laneWaiting = () =>
      expect.poll(async () => (await laneBackends()).some((b) => b.waiting), POLL).toBe(true);

    /**
     * Runs `fn` while an organization's entry waits on the audit connection for its head, which
     * another transaction holds locked until `fn` releases it; the pool is ended afterwards.
     */
    async function whileLaneWaits(
      fn: (x: {
        org: string;
        pool: Sql;
        pending: ReturnType<typeof recordAttempt>;
        release(): Promise<void>;
      }) => Promise<void>,
    ): Promise<void> {
      const org = await newOrg();
      const pool = await poolWithLane(org);
      const hold = await holdHead(org);
      try {
        const pending = recordAttempt(pool, attempt(org, 1));
        await laneWaiting();
        await fn({ org, pool, pending, release: () => hold.release() });
      } finally {
        await hold.release();
        // postgres.js can leave a client whose connection dropped mid-query unable to end; a
        // lane given up on was cut then, so this returns.
        await pool.end();
      }
    }

    it("carries the pool's appends once it has answered, and ends with the pool", async () => {
      const org = await newOrg();
      const pool = await poolWithLane(org);
      await recordAttempt(pool, attempt(org, 1));
      const [lane, ...more] = await laneBackends();
      expect(more).toEqual([]);
      expect(lane?.query).toContain('audit_log');
      await pool.end();
      await expect.poll(async () => (await laneBackends()).length, POLL).toBe(0);
      // A one-connection store (dev mode's PGlite serves one session) gets no second connection.
      const single = openStore(store.url, { max: 1 });
      expect(auditLaneOf(single)).toBeUndefined();
      await recordAttempt(single, attempt(org, 2));
      expect(await laneBackends()).toEqual([]);
      await single.end();
      expect(await verifyAuditChain(a, org)).toMatchObject({ entries: 3, ok: true });
    });

    it('300 appends from two store pools through their audit connections: one gap-free chain', async () => {
      const org = await newOrg();
      const [p, q] = [await poolWithLane(org), await poolWithLane(org)];
      try {
        const settled = await Promise.allSettled(
          Array.from({ length: 300 }, (_, i) =>
            recordAttempt(
              i % 2 ? p : q,
              i === 150 ? { ...attempt(org, i), outcome: 'bogus' as never } : attempt(org, i),
            ),
          ),
        );
        // Only the refused entry fails, and a bad entry does not lose the others of its batch.
        expect(settled.filter((x) => x.status === 'rejected').map((x) => x.reason.code)).toEqual(['23514']);
        await expectChain(org, settled, 301);
      } finally {
        await p.end();
        await q.end();
      }
    });

    it('is not queued on while busy: a head locked elsewhere holds up only its own organization', async () => {
      const [blocked, free] = [await newOrg(), await newOrg()];
      const pool = await poolWithLane(blocked);
      const hold = await holdHead(blocked);
      try {
        let blockedDone = false;
        // Takes the audit connection, then waits there for the lock.
        const waiting = recordAttempt(pool, attempt(blocked, 1)).finally(() => {
          blockedDone = true;
        });
        await laneWaiting();
        // Over the pool instead; queued behind the waiting statement it would hang here.
        expect((await recordAttempt(pool, attempt(free, 2))).seq).toBe(1n);
        expect(blockedDone).toBe(false);
        await hold.release();
        expect((await waiting).seq).toBe(2n);
      } finally {
        await hold.release();
        await pool.end();
      }
    });

    it('an audit connection lost mid-append fails nobody: the batch goes again through the pool', async () => {
      await whileLaneWaits(async ({ org, pool, pending, release }) => {
        const [lane] = await laneBackends();
        // Waits (up to 5 s) until the server process is gone: its statement is not committed.
        await a`select pg_terminate_backend(${lane!.pid}, 5000)`;
        await expect.poll(() => auditLaneOf(pool)?.up, POLL).toBe(false);
        await release();
        expect((await pending).seq).toBe(2n);
        expect(await seqs(org)).toEqual(oneTo(2));
        expect((await recordAttempt(pool, attempt(org, 3))).seq).toBe(3n);
      });
      expect(await laneBackends()).toEqual([]);
    });

    it('an entry the audit connection wrote after its client gave up is reported with its place', async () => {
      await whileLaneWaits(async ({ org, pool, pending, release }) => {
        // The client goes; its server process, waiting for the lock, still has the statement
        // and its Sync: it commits once the lock is free. The retry over the pool waits behind
        // it, collides on the entry's id and finds the entry, hash and all.
        await auditLaneOf(pool)!.end({ timeout: 0 });
        await release();
        const entry = await pending;
        expect(entry.seq).toBe(2n);
        const rows = await a<
          { n: number }[]
        >`select count(*)::int as n from audit_log where id = ${entry.id}`;
        expect(rows[0]!.n).toBe(1);
        expect(await verifyAuditChain(a, org)).toMatchObject({ entries: 2, ok: true });
      });
    });
  });
});
