// Group commit for audit appends (DESIGN.md pipeline step 6). Every governed query
// appends to its organization's hash chain, and appends of one organization serialize on the
// chain head's row lock: one statement per entry made that lock the bottleneck under concurrent
// MCP clients. Here each pool keeps, per organization, at most one append call in flight; entries
// that arrive meanwhile wait and go together as the next batch (audit_append in
// store/migrations/0020_audit_batch.sql), so the lock is taken once per batch. An idle
// organization's entry is sent at once: no timer, no added latency.
//
// A batch goes over the pool's audit connection (store/audit-lane.ts) when that works and is
// free, else over the pool. postgres.js hands each query to the idle connection that waited
// longest, so successive batches through a pool of ten visit ten server processes in turn; kept
// on one (warm caches), one same-window A/B gave 14 % more MCP calls/s with 8 clients and
// 0.05 ms less PostgreSQL CPU per call, though the bench's paired rounds do not tell it from
// noise (docs/known-limits.md). A busy lane is not queued on, so an organization whose head is
// locked elsewhere (an append inside a long transaction) does not hold up another's batches there.
import { appendAfter, forgetHead, knownHead, noteHead } from './audit-head.ts';
import { withStall } from './audit-lane.ts';
import { auditLaneOf, type Sql, type Tx } from './db.ts';

/** Where an entry landed in its organization's chain. */
export interface Appended {
  id: string;
  seq: bigint;
  hash: string;
}

/** An entry to append: its id and its body (the canonical JSON that is hashed and stored). */
export interface Pending {
  id: string;
  body: string;
}

interface Waiter extends Pending {
  resolve(row: Appended): void;
  reject(err: unknown): void;
}

/** Enough to keep one round trip short; a larger backlog goes in the batches after it. */
export const MAX_BATCH = 64;

// Keyed by the root pool: two pools (two processes, or a test's second client) each batch their
// own entries and meet at the row lock, which keeps their chain in order anyway.
const queues = new WeakMap<Sql, Map<string, Waiter[]>>();

/** A root pool has `begin`; a transaction (`sql.begin(tx => …)`) or a reserved connection has not. */
export function isPool(sql: Tx): sql is Sql {
  return typeof (sql as Partial<Sql>).begin === 'function';
}

/**
 * Appends entries of one organization in one call, in order, on `sql` as given. Rejects as a
 * whole when any entry is refused: nothing of the batch is written then.
 */
export async function appendNow(sql: Tx, orgId: string, entries: readonly Pending[]): Promise<Appended[]> {
  if (entries.length === 1) return [await appendOne(sql, orgId, entries[0]!)];
  const rows = await sql<Appended[]>`
    select id, seq, hash from audit_append(${orgId}, ${entries.map((e) => e.body)}::text[])`;
  // Matched by id: RETURNING's row order is not something to lean on.
  const byId = new Map(rows.map((r) => [r.id, r]));
  return entries.map((e) => {
    const row = byId.get(e.id);
    if (!row) throw new Error(`audit entry ${e.id} was not appended`);
    return row;
  });
}

/**
 * A batch of one — an idle organization's entry, or one inside a transaction — as one statement:
 * measured, it costs PostgreSQL about 0.1 ms less than a call of the plpgsql function, which only
 * pays off from two entries on. The same chain formula and the same storing from the body as
 * audit_append (store/migrations/0020_audit_batch.sql): keep the two in step. Updating the head
 * takes its row lock, and READ COMMITTED re-reads the head after the wait.
 */
async function appendOne(sql: Tx, orgId: string, entry: Pending): Promise<Appended> {
  // An entry of another organization finds no head here, so it is refused rather than hashed
  // into this chain (a data-modifying CTE runs whole: the check must be in the update).
  const [row] = await sql<Appended[]>`
    with entry as (select ${orgId}::text as org_id, ${entry.body}::text as body),
    head as (
      update audit_heads h
      set prev_hash = h.hash,
          seq = h.seq + 1,
          hash = encode(sha256(convert_to(h.hash || ':' || (h.seq + 1)::text || ':' || entry.body, 'UTF8')), 'hex')
      from entry
      where h.org_id = entry.org_id and entry.body::jsonb ->> 'org_id' = entry.org_id
      returning h.seq, h.hash, h.prev_hash, entry.body
    )
    insert into audit_log (
      id, org_id, seq, occurred_at, actor_kind, actor_user_id, actor_api_key_id, actor_workflow_run_id,
      actor_workflow_id, origin, ai_client_id, ai_client_name, database_id, credential_id, statement,
      params, classification, rows_returned, duration_ms, request_id, reviews_required, approved_by,
      bypassed, bypass_reason, outcome, detail, event, subject, prev_hash, hash)
    select
      e.id, e.org_id, head.seq, e.occurred_at, e.actor_kind, e.actor_user_id, e.actor_api_key_id,
      e.actor_workflow_run_id, e.actor_workflow_id, e.origin, e.ai_client_id, e.ai_client_name,
      e.database_id, e.credential_id, e.statement, e.params, e.classification, e.rows_returned,
      e.duration_ms, e.request_id, e.reviews_required, e.approved_by, e.bypassed, e.bypass_reason,
      e.outcome, e.detail, coalesce(e.event, 'query'), e.subject, head.prev_hash, head.hash
    from head, jsonb_populate_record(null::audit_log, head.body::jsonb) as e
    returning id, seq, hash`;
  if (!row) throw new Error(`organization ${orgId} has no audit chain head (or the entry is not its own)`);
  return row;
}

/**
 * Appends one entry through its pool's queue for the organization. Resolves with the entry's
 * own place in the chain once it is committed, or rejects: the caller must not go on without it.
 */
export function appendGrouped(pool: Sql, orgId: string, entry: Pending): Promise<Appended> {
  let byOrg = queues.get(pool);
  if (!byOrg) {
    byOrg = new Map();
    queues.set(pool, byOrg);
  }
  const waiting = byOrg.get(orgId);
  return new Promise<Appended>((resolve, reject) => {
    const waiter = { ...entry, resolve, reject };
    // A queue exists only while a batch of this organization is in flight: join the next one.
    if (waiting) waiting.push(waiter);
    else {
      const queue = [waiter];
      byOrg.set(orgId, queue);
      void drain(pool, byOrg, orgId, queue);
    }
  });
}

/** Sends the queue's entries batch after batch until nobody is waiting, then forgets the queue. */
async function drain(pool: Sql, byOrg: Map<string, Waiter[]>, orgId: string, queue: Waiter[]): Promise<void> {
  while (queue.length > 0) await commit(pool, orgId, queue.splice(0, MAX_BATCH));
  byOrg.delete(orgId);
}

async function commit(pool: Sql, orgId: string, batch: Waiter[]): Promise<void> {
  let rows = await viaLane(pool, orgId, batch);
  if (!rows) {
    try {
      rows = await appendOnHead(pool, pool, orgId, batch);
    } catch (err) {
      if (batch.length === 1) await refused(pool, orgId, batch[0]!, err);
      else await oneByOne(pool, orgId, batch);
      return;
    }
  }
  for (const [i, w] of batch.entries()) w.resolve(rows[i]!);
}

/**
 * A pool's batch on `sql` (the pool or its audit connection): right after the head the pool last
 * saw when it knows one (store/audit-head.ts), else, or when the chain moved meanwhile, through
 * audit_append. Either way the pool learns the head its batch left.
 */
async function appendOnHead(pool: Sql, sql: Tx, orgId: string, batch: Waiter[]): Promise<Appended[]> {
  const head = knownHead(pool, orgId);
  if (head) {
    let rows: Appended[] | null = null;
    try {
      rows = await appendAfter(sql, orgId, head, batch);
    } catch {
      // Refused (or its answer lost): audit_append says why, or finds what was written after all.
    }
    if (rows) {
      noteHead(pool, orgId, rows);
      return rows;
    }
    forgetHead(pool, orgId, true);
  }
  const rows = await appendNow(sql, orgId, batch);
  noteHead(pool, orgId, rows);
  return rows;
}

/** The batch appended over the pool's audit connection, or null: not free, or given up there. */
async function viaLane(pool: Sql, orgId: string, batch: Waiter[]): Promise<Appended[] | null> {
  const lane = auditLaneOf(pool);
  const client = lane?.take();
  if (!lane || !client) return null;
  try {
    const rows = await withStall(appendOnHead(pool, client, orgId, batch));
    lane.done(true);
    return rows;
  } catch {
    // Given up (store/audit-lane.ts); the batch goes again over the pool, where an entry the
    // lane wrote after all is found rather than failed (refused).
    lane.done(false);
    return null;
  }
}

/** The batch was refused as a whole: one bad entry must fail only its own caller. */
async function oneByOne(pool: Sql, orgId: string, batch: Waiter[]): Promise<void> {
  for (const w of batch) {
    try {
      w.resolve((await appendNow(pool, orgId, [w]))[0]!);
    } catch (err) {
      await refused(pool, orgId, w, err);
    }
  }
}

/**
 * An entry refused on its own fails its caller, except one that was written after all (its
 * answer lost with the connection, or written by a lane statement given up on): it collides on
 * its id, is looked up, and its caller told its place only if the stored hash is the hash of
 * this very body at that place. Never a result without its entry.
 */
async function refused(pool: Sql, orgId: string, w: Waiter, err: unknown): Promise<void> {
  const found = isDuplicateId(err) ? await writtenAlready(pool, orgId, w).catch(() => null) : null;
  if (found) w.resolve(found);
  else w.reject(err);
}

function isDuplicateId(err: unknown): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown };
  return e.code === '23505' && e.constraint_name === 'audit_log_pkey';
}

/** The entry's place when `audit_log` holds exactly it: the chain formula of audit_append. */
async function writtenAlready(pool: Sql, orgId: string, entry: Pending): Promise<Appended | null> {
  const [row] = await pool<Appended[]>`
    select id, seq, hash from audit_log
    where id = ${entry.id} and org_id = ${orgId}
      and hash = encode(sha256(convert_to(prev_hash || ':' || seq::text || ':' || ${entry.body}::text, 'UTF8')), 'hex')`;
  return row ?? null;
}
