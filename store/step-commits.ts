// The exactly-once ledger of workflow query steps (migration 0026, governance/once.ts).
import type { Tx } from './db.ts';

/** Rows older than this are purged: every attempt of their step has long ended (timeouts ≤ 1 day). */
const KEEP_DAYS = 3;

export interface StepCommitRow {
  claimed_attempt: number;
  committed_attempt: number | null;
  outcome: unknown;
}

/**
 * Attempt `attempt` claims the step: from now on no earlier attempt can record a commit. Returns
 * the row as it stands after the claim, so a commit decided before it is seen.
 */
export async function claimStep(
  sql: Tx,
  key: { runId: string; stepId: string; attempt: number },
): Promise<StepCommitRow> {
  const [row] = await sql<StepCommitRow[]>`
    insert into query_step_commits (run_id, step_id, claimed_attempt)
    values (${key.runId}, ${key.stepId}, ${key.attempt})
    on conflict (run_id, step_id) do update
      set claimed_attempt = greatest(query_step_commits.claimed_attempt, excluded.claimed_attempt),
          updated_at = now()
    returning claimed_attempt, committed_attempt, outcome`;
  await sql`delete from query_step_commits where updated_at < now() - make_interval(days => ${KEEP_DAYS})`;
  return row!;
}

/**
 * Records that `attempt`'s prepared transaction commits, with the step output; false when a later
 * attempt has claimed the step since (then this one must roll back instead).
 */
export async function decideCommit(
  sql: Tx,
  key: { runId: string; stepId: string; attempt: number },
  outcome: unknown,
): Promise<boolean> {
  const rows = await sql`
    update query_step_commits
       set committed_attempt = ${key.attempt}, outcome = ${sql.json(outcome as never)}, updated_at = now()
     where run_id = ${key.runId} and step_id = ${key.stepId}
       and claimed_attempt = ${key.attempt} and committed_attempt is null
    returning 1`;
  return rows.length === 1;
}
