// The exactly-once ledger of workflow query steps (migrations 0026 and 0033, governance/once.ts).
import type { Tx } from './db.ts';

/** Rows older than this are purged: every attempt of their step has long ended (timeouts ≤ 1 day). */
export const KEEP_DAYS = 3;

export interface StepCommitRow {
  claimed_attempt: number;
  committed_attempt: number | null;
  outcome: unknown;
}

/** The database and credential whose pool runs a step's write (the pool registry's two ids). */
export interface StepLocation {
  databaseId: string;
  credentialId: string;
}

type StepKey = { runId: string; stepId: string; attempt: number };

/**
 * Attempt `attempt` claims the step: from now on no earlier attempt can record a commit. Returns
 * the row as it stands after the claim, so a commit decided before it is seen. `where` is recorded
 * for the sweep of prepared transactions left behind (automation/prepared-sweep.ts).
 */
export async function claimStep(sql: Tx, key: StepKey, where?: StepLocation): Promise<StepCommitRow> {
  const [row] = await sql<StepCommitRow[]>`
    insert into query_step_commits (run_id, step_id, claimed_attempt, database_id, credential_id)
    values (${key.runId}, ${key.stepId}, ${key.attempt}, ${where?.databaseId ?? null}, ${where?.credentialId ?? null})
    on conflict (run_id, step_id) do update
      set claimed_attempt = greatest(query_step_commits.claimed_attempt, excluded.claimed_attempt),
          database_id = coalesce(query_step_commits.database_id, excluded.database_id),
          credential_id = coalesce(query_step_commits.credential_id, excluded.credential_id),
          updated_at = now()
    returning claimed_attempt, committed_attempt, outcome`;
  // A row with a location is purged by the sweep only once its target lists nothing of it
  // (purgeSettled): dropping it earlier would leave a prepared transaction nobody may settle.
  await sql`
    delete from query_step_commits
     where updated_at < now() - make_interval(days => ${KEEP_DAYS})
       and (database_id is null or credential_id is null)`;
  return row!;
}

/**
 * Records that `attempt`'s prepared transaction commits, with the step output; false when a later
 * attempt has claimed the step since (then this one must roll back instead).
 */
export async function decideCommit(sql: Tx, key: StepKey, outcome: unknown): Promise<boolean> {
  const rows = await sql`
    update query_step_commits
       set committed_attempt = ${key.attempt}, outcome = ${sql.json(outcome as never)}, updated_at = now()
     where run_id = ${key.runId} and step_id = ${key.stepId}
       and claimed_attempt = ${key.attempt} and committed_attempt is null
    returning 1`;
  return rows.length === 1;
}

/** A (database, credential) with ledger rows, and the organization the database belongs to. */
export interface SweptLocation extends StepLocation {
  orgId: string;
}

/** Every location with ledger rows: nothing when no write step ran in the last days. */
export async function sweptLocations(sql: Tx): Promise<SweptLocation[]> {
  return sql<SweptLocation[]>`
    select distinct c.database_id as "databaseId", c.credential_id as "credentialId", d.org_id as "orgId"
      from query_step_commits c join databases d on d.id = c.database_id
     where c.database_id is not null and c.credential_id is not null`;
}

/** A ledger row as the sweep reads it. */
export interface LedgerRow {
  run_id: string;
  step_id: string;
  claimed_attempt: number;
  committed_attempt: number | null;
  database_id: string | null;
  credential_id: string | null;
  /** Untouched for longer than the sweep's `abandonedHours`. */
  abandoned: boolean;
  /** Past KEEP_DAYS: the sweep purges it once its target lists nothing of it. */
  expired: boolean;
  /** The run's workflow, when the run is still stored (for the audit event). */
  workflow_id: string | null;
}

export async function ledgerRows(sql: Tx, abandonedHours: number): Promise<LedgerRow[]> {
  return sql<LedgerRow[]>`
    select c.run_id, c.step_id, c.claimed_attempt, c.committed_attempt, c.database_id, c.credential_id,
           c.updated_at < now() - make_interval(hours => ${abandonedHours}) as abandoned,
           c.updated_at < now() - make_interval(days => ${KEEP_DAYS}) as expired,
           r.workflow_id
      from query_step_commits c left join workflow_runs r on r.id = c.run_id`;
}

/**
 * Takes the claim of a step whose claimed attempt `attempt` is abandoned (untouched for
 * `abandonedHours`), by the rule claimStep follows: the claim becomes `attempt + 1`, so `attempt`
 * can no longer record a commit. Null when the row is no longer as the sweep read it (another
 * attempt claimed or decided since, or it was touched); else the row after the claim, whose
 * committed_attempt says whether `attempt` recorded its commit before.
 */
export async function takeAbandonedClaim(
  sql: Tx,
  key: StepKey,
  abandonedHours: number,
): Promise<Pick<StepCommitRow, 'claimed_attempt' | 'committed_attempt'> | null> {
  const [row] = await sql<Pick<StepCommitRow, 'claimed_attempt' | 'committed_attempt'>[]>`
    update query_step_commits
       set claimed_attempt = greatest(claimed_attempt, ${key.attempt + 1}), updated_at = now()
     where run_id = ${key.runId} and step_id = ${key.stepId}
       and claimed_attempt = ${key.attempt}
       and updated_at < now() - make_interval(hours => ${abandonedHours})
    returning claimed_attempt, committed_attempt`;
  return row ?? null;
}

/**
 * Purges rows of `where` past KEEP_DAYS whose target listed none of their prepared transactions
 * (`keep`: the rows that had one listed). Past KEEP_DAYS no attempt can prepare another.
 */
export async function purgeSettled(
  sql: Tx,
  where: StepLocation,
  keep: { runId: string; stepId: string }[],
): Promise<number> {
  const rows = await sql`
    delete from query_step_commits
     where database_id = ${where.databaseId} and credential_id = ${where.credentialId}
       and updated_at < now() - make_interval(days => ${KEEP_DAYS})
       and not exists (
         select 1 from unnest(${keep.map((k) => k.runId)}::text[], ${keep.map((k) => k.stepId)}::text[]) as k(r, s)
          where k.r = run_id and k.s = step_id)
    returning 1`;
  return rows.length;
}
