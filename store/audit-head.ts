// The chain head a pool last saw for each organization, and an append that builds on it
// (store/audit-writer.ts). Once a pool knows where an organization's chain ends, it hashes its
// next batch itself and sends one statement that moves the head only if it is still where the
// pool saw it, and inserts the batch only if it moved it: a compare-and-set. No lease has to be
// held or handed over for the chain to stay whole: whichever replica (or transaction) appended
// in between, the head no longer matches, nothing is written, and the batch goes the usual way
// (audit_append, which reads the head under its row lock) and tells this pool the new head.
// What the pool saves is PostgreSQL's work per entry: no plpgsql call, no hashing in SQL.
import { entryHash } from '../audit/chain.ts';
import type { Appended, Pending } from './audit-writer.ts';
import type { Sql, Tx } from './db.ts';

interface Head {
  seq: bigint;
  hash: string;
}

/** After a lost race, how long the pool leaves the organization's chain to the other writer. */
export const CONTENDED_MS = 1_000;
/** Organizations remembered per pool at most; past it the least recently used goes. */
const LIMIT = 10_000;

const known = new WeakMap<Sql, Map<string, Head>>();
const contended = new WeakMap<Sql, Map<string, number>>();

/** The head `pool` may build on for `orgId`, if it knows one and did not lose a race lately. */
export function knownHead(pool: Sql, orgId: string): Head | undefined {
  const until = contended.get(pool)?.get(orgId);
  if (until !== undefined) {
    if (performance.now() < until) return undefined;
    contended.get(pool)!.delete(orgId);
  }
  return known.get(pool)?.get(orgId);
}

/** The head after an append `pool` made (the last entry it got back). */
export function noteHead(pool: Sql, orgId: string, rows: readonly Appended[]): void {
  const last = rows[rows.length - 1];
  if (!last) return;
  let heads = known.get(pool);
  if (!heads) {
    heads = new Map();
    known.set(pool, heads);
  }
  heads.delete(orgId);
  if (heads.size >= LIMIT) heads.delete(heads.keys().next().value!);
  heads.set(orgId, { seq: BigInt(last.seq), hash: last.hash });
}

/**
 * Forgets the head: the append failed (whether it was written is not known) or the chain moved
 * elsewhere. `raced` also leaves the organization to the usual path for CONTENDED_MS, so two
 * replicas writing one chain do not each waste a statement per batch.
 */
export function forgetHead(pool: Sql, orgId: string, raced = false): void {
  known.get(pool)?.delete(orgId);
  if (!raced) return;
  let map = contended.get(pool);
  if (!map) {
    map = new Map();
    contended.set(pool, map);
  }
  map.set(orgId, performance.now() + CONTENDED_MS);
}

/**
 * Appends `entries` right after `head`, in one statement, or returns null when the head is no
 * longer there (nothing written then). The formula is the chain's (audit/chain.ts entryHash, the
 * same as audit_append's); every row is stored from the very body that was hashed; an entry whose
 * body names another organization fails the statement (nothing written, the head unmoved).
 */
export async function appendAfter(
  sql: Tx,
  orgId: string,
  head: Head,
  entries: readonly Pending[],
): Promise<Appended[] | null> {
  const bodies: string[] = [];
  const seqs: string[] = [];
  const prevs: string[] = [];
  const hashes: string[] = [];
  const rows: Appended[] = [];
  let seq = head.seq;
  let hash = head.hash;
  for (const e of entries) {
    bodies.push(e.body);
    prevs.push(hash);
    seq += 1n;
    hash = entryHash(hash, seq, e.body);
    seqs.push(String(seq));
    hashes.push(hash);
    rows.push({ id: e.id, seq, hash });
  }
  // A data-modifying CTE runs whole: the insert takes its rows only from a head that moved.
  const inserted = await sql`
    with head as (
      update audit_heads h
      set seq = ${String(seq)}::bigint, prev_hash = ${prevs[prevs.length - 1]!}, hash = ${hash}
      where h.org_id = ${orgId} and h.seq = ${String(head.seq)}::bigint and h.hash = ${head.hash}
      returning 1
    )
    insert into audit_log (
      id, org_id, seq, occurred_at, actor_kind, actor_user_id, actor_api_key_id, actor_workflow_run_id,
      actor_workflow_id, origin, ai_client_id, ai_client_name, database_id, credential_id, statement,
      params, classification, rows_returned, duration_ms, request_id, reviews_required, approved_by,
      bypassed, bypass_reason, outcome, detail, event, subject, prev_hash, hash)
    select
      -- An entry of another organization gets no org_id: the NOT NULL constraint fails the
      -- statement, the head stays, and the batch goes to audit_append, which refuses it.
      e.id, case when e.org_id = ${orgId} then e.org_id end, b.seq, e.occurred_at, e.actor_kind, e.actor_user_id, e.actor_api_key_id,
      e.actor_workflow_run_id, e.actor_workflow_id, e.origin, e.ai_client_id, e.ai_client_name,
      e.database_id, e.credential_id, e.statement, e.params, e.classification, e.rows_returned,
      e.duration_ms, e.request_id, e.reviews_required, e.approved_by, e.bypassed, e.bypass_reason,
      e.outcome, e.detail, coalesce(e.event, 'query'), e.subject, b.prev, b.hash
    from unnest(${bodies}::text[], ${seqs}::bigint[], ${prevs}::text[], ${hashes}::text[])
      as b(body, seq, prev, hash)
    cross join lateral jsonb_populate_record(null::audit_log, b.body::jsonb) as e
    where exists (select from head)
    returning 1`;
  if (inserted.length === 0) return null;
  if (inserted.length !== entries.length) throw new Error('audit batch appended in part');
  return rows;
}
