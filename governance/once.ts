// Exactly-once writes for workflow query steps (workflows/README.md "Exactly-once query steps").
// Temporal runs an activity at least once: an attempt whose worker died, or that timed out, is run
// again, and the statement of the first may have committed or may still be running. On a target
// with two-phase commit, each attempt of a write step runs its statement in a transaction it
// only PREPAREs; the store then decides which attempt's transaction commits, so that:
//
//   attempt N: claim the step in the store (no earlier attempt can record a commit after this)
//              → a commit already recorded by attempt k: COMMIT PREPARED k if still prepared,
//                return k's recorded output; the statement does not run again
//              → end the sessions of earlier attempts on the target (by their tag) and wait
//              → ROLLBACK PREPARED every earlier attempt's transaction (none recorded a commit);
//                never a later one's: that one may have claimed since and be about to commit
//              → run the statement tagged, PREPARE TRANSACTION 'cs:<run>:<step>:N'
//              → record "N commits" with the output, only while N still holds the claim
//                (else a later attempt took over: roll back and fail this attempt)
//              → COMMIT PREPARED; a crash after the record is settled by the next attempt.
//
// Without two-phase commit a write runs at least once, but never alongside an earlier attempt's
// statement: that one is ended first.
//
// A prepared transaction no later attempt comes to settle (an abandoned attempt that prepared
// after the winner finished, a recorded commit whose run was terminated) is settled by the
// periodic sweep (automation/prepared-sweep.ts), by the same ledger rules; the ledger names the database and
// credential each step runs on for it.
import { createHash } from 'node:crypto';
import type { AdapterPool, ExecuteOptions, QueryResult, SessionControl } from '../adapters/types.ts';
import type { Tx } from '../store/db.ts';
import { claimStep, decideCommit, type StepLocation } from '../store/step-commits.ts';

/** Which attempt of which workflow step a statement is (activities/query.ts). */
export interface StepAttempt {
  runId: string;
  stepId: string;
  /** Temporal's attempt number, from 1. */
  attempt: number;
}

/**
 * How the statement ran: `exactly_once` (prepared and committed by this attempt), `recovered`
 * (an earlier attempt's committed write; its output returned, nothing run), `at_least_once` (a
 * write on a target without two-phase commit), `read`.
 */
export type Delivery = 'exactly_once' | 'recovered' | 'at_least_once' | 'read';

export interface AttemptOutcome {
  result: QueryResult;
  delivery: Delivery;
  /** For `recovered`: the attempt whose write it was. */
  recoveredFrom?: number;
}

/** How long an attempt waits for the sessions of earlier attempts to end. */
const END_WAIT_MS = 10_000;

/** A run's or step's id in a session tag: its ULID (ids are `prefix_ULID`), else a digest. */
function short(id: string): string {
  const tail = id.slice(id.lastIndexOf('_') + 1);
  return /^[0-9A-Z]{26}$/.test(tail) ? tail : createHash('sha256').update(id).digest('hex').slice(0, 26);
}

/** `cs:<run>:<step>:`: every attempt's session tag and prepared transaction id starts with it. */
export function stepTagPrefix(key: Pick<StepAttempt, 'runId' | 'stepId'>): string {
  return `cs:${short(key.runId)}:${short(key.stepId)}:`;
}

type SessionOptions = Pick<ExecuteOptions, 'tag' | 'prepareAs'>;

/** The output as recorded for recovery: what a later attempt returns in place of running again. */
function recorded(result: QueryResult): QueryResult {
  const { columnSources: _, ...rest } = result;
  return rest;
}

/** Rolls back the prepared transactions of this step's attempts numbered below `attempt`. */
async function rollBackEarlier(control: SessionControl, prefix: string, attempt: number): Promise<void> {
  for (const id of await control.prepared(prefix))
    if (Number(id.slice(prefix.length)) < attempt) await control.finish(id, false);
}

/**
 * Runs `exec` (the governed execution of the statement) as attempt `key` of a workflow step.
 * Reads simply run; writes follow the protocol above. `where` names the pool's database and
 * credential in the ledger, so the periodic sweep (automation/prepared-sweep.ts) can settle what a dead attempt
 * left prepared there.
 */
export async function runStepAttempt(
  sql: Tx,
  pool: AdapterPool,
  key: StepAttempt,
  write: boolean,
  exec: (session: SessionOptions) => Promise<QueryResult>,
  where?: StepLocation,
): Promise<AttemptOutcome> {
  const control = pool.sessions;
  if (!write) return { result: await exec({}), delivery: 'read' };
  if (!control) return { result: await exec({}), delivery: 'at_least_once' };
  const prefix = stepTagPrefix(key);
  const own = `${prefix}${key.attempt}`;
  if (!(await control.twoPhase())) {
    await control.endTagged(prefix, END_WAIT_MS);
    return { result: await exec({ tag: own }), delivery: 'at_least_once' };
  }
  const claim = await claimStep(sql, key, where);
  if (claim.committed_attempt !== null) {
    // Its worker may have died between the record and COMMIT PREPARED; false: it had committed.
    await control.finish(`${prefix}${claim.committed_attempt}`, true);
    return {
      result: claim.outcome as QueryResult,
      delivery: 'recovered',
      recoveredFrom: claim.committed_attempt,
    };
  }
  await control.endTagged(prefix, END_WAIT_MS);
  // Earlier attempts recorded no commit, and after the claim never can: their writes are undone.
  // Only earlier ones: a later attempt may have claimed since and be about to commit its own.
  await rollBackEarlier(control, prefix, key.attempt);
  const result = await exec({ tag: own, prepareAs: own });
  if (!(await decideCommit(sql, key, recorded(result)))) {
    await control.finish(own, false);
    throw new Error('a later attempt of this step took over; this one was rolled back');
  }
  // False only when a later attempt, finding the commit recorded, settled it first.
  await control.finish(own, true);
  // An earlier attempt still alive may have prepared after the sweep above and died before it could
  // roll itself back: its transaction would hold its locks until someone settles it.
  await rollBackEarlier(control, prefix, key.attempt);
  return { result, delivery: 'exactly_once' };
}
