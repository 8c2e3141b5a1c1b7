// Idempotency keys of run starts (draft-ietf-httpapi-idempotency-key-header): a retried
// `POST …/run` with the key of an earlier request names the run that request started.
import type { RunSnapshot } from '../workflows/types.ts';
import type { Sql, Tx } from './db.ts';
import { insertRun, type NewRun } from './workflow-runs.ts';

/** Keys are kept this long; a retry later than that starts a new run. */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;

export interface IdempotentStart {
  caller: string;
  key: string;
  requestHash: string;
}

/** The run an earlier request with this key started, and the hash of that request's inputs. */
export async function findIdempotentRun(
  sql: Sql,
  workflowId: string,
  caller: string,
  key: string,
): Promise<{ run_id: string; request_hash: string } | null> {
  const [row] = await sql<{ run_id: string; request_hash: string }[]>`
    select run_id, request_hash from run_idempotency_keys
    where workflow_id = ${workflowId} and caller = ${caller} and key = ${key}
      and created_at > now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})`;
  return row ?? null;
}

/**
 * Records the run and its key in one transaction, with `also` (the start's audit event). When a
 * concurrent request with the same key got there first, nothing is written and that request's
 * run is returned instead.
 */
export async function insertRunWithKey(
  sql: Sql,
  run: NewRun,
  snapshot: RunSnapshot,
  idem: IdempotentStart,
  also: (tx: Tx) => Promise<unknown>,
): Promise<{ run_id: string; request_hash: string; created: boolean }> {
  // An expired key is forgotten first, so its slot can take the new run.
  await sql`
    delete from run_idempotency_keys
    where workflow_id = ${run.workflow_id} and caller = ${idem.caller} and key = ${idem.key}
      and created_at <= now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})`;
  const created = await sql
    .begin(async (tx) => {
      await insertRun(tx, run, snapshot);
      // The primary key serializes two requests with one key: the second waits for the first's
      // commit, then inserts nothing.
      const rows = await tx`
      insert into run_idempotency_keys (workflow_id, caller, key, request_hash, run_id)
      values (${run.workflow_id}, ${idem.caller}, ${idem.key}, ${idem.requestHash}, ${run.id})
      on conflict do nothing
      returning run_id`;
      if (rows.length === 0) throw new KeyTaken();
      await also(tx);
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof KeyTaken) return false;
      throw err;
    });
  if (created) return { run_id: run.id, request_hash: idem.requestHash, created };
  const earlier = await findIdempotentRun(sql, run.workflow_id, idem.caller, idem.key);
  if (!earlier) throw new Error('idempotency key vanished between its conflict and its read');
  return { ...earlier, created: false };
}

class KeyTaken extends Error {}

/** Forgets keys past their lifetime (the run sweep calls it). */
export async function pruneIdempotencyKeys(sql: Sql): Promise<void> {
  await sql`
    delete from run_idempotency_keys
    where created_at <= now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})`;
}
