import type { RunSnapshot, RunState, RunStatus, RunTrigger } from '../workflows/types.ts';
import type { Tx } from './db.ts';

/** One run of a workflow; the Temporal workflow id is `id`. */
export interface WorkflowRunRow {
  id: string;
  workflow_id: string;
  org_id: string;
  trigger: RunTrigger;
  initiator_user_id: string | null;
  initiator_api_key_id: string | null;
  inputs: Record<string, string | number | boolean>;
  status: RunStatus;
  state: RunState | null;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/** The row's columns as WorkflowRunRow has them (the snapshot is the sweep's, never read out). */
const ROW_COLUMNS =
  'id, workflow_id, org_id, trigger, initiator_user_id, initiator_api_key_id, inputs, status, state, error, started_at, finished_at';

export type NewRun = Pick<
  WorkflowRunRow,
  'id' | 'workflow_id' | 'org_id' | 'trigger' | 'initiator_user_id' | 'initiator_api_key_id' | 'inputs'
>;

/**
 * Records a run as started, with the snapshot its execution starts with (the sweep starts it from
 * there when the process that wrote the row stopped first); a second insert of the same id (a
 * retried activity) changes nothing. True when the row is new.
 */
export async function insertRun(sql: Tx, run: NewRun, snapshot: RunSnapshot): Promise<boolean> {
  const rows = await sql`
    insert into workflow_runs (id, workflow_id, org_id, trigger, initiator_user_id, initiator_api_key_id, inputs, status, snapshot)
    values (${run.id}, ${run.workflow_id}, ${run.org_id}, ${run.trigger}, ${run.initiator_user_id},
            ${run.initiator_api_key_id}, ${sql.json(run.inputs)}, 'running',
            ${sql.json(snapshot as unknown as Parameters<Tx['json']>[0])})
    on conflict (id) do nothing
    returning id`;
  return rows.length > 0;
}

/** Moves a running run between running and waiting_for_approval; an ended run stays ended. */
export async function setRunStatus(
  sql: Tx,
  id: string,
  status: 'running' | 'waiting_for_approval',
): Promise<void> {
  await sql`
    update workflow_runs set status = ${status}
    where id = ${id} and status in ('running', 'waiting_for_approval')`;
}

/** Records how the run ended, with its final step states and approvals. */
export async function finishRun(sql: Tx, id: string, state: RunState): Promise<void> {
  await sql`
    update workflow_runs
    set status = ${state.status}, error = ${state.error},
        state = ${sql.json(state as unknown as Parameters<Tx['json']>[0])},
        finished_at = coalesce(finished_at, now()), snapshot = null, checked_at = null
    where id = ${id}`;
}

/** Marks a run that could not be started (Temporal refused or was unreachable). */
export async function failRunStart(sql: Tx, id: string, error: string): Promise<void> {
  await settleRun(sql, id, 'failed', error);
}

/**
 * Ends a run the run itself could not record (never started, or ended in Temporal from outside);
 * false when it had already ended, so a run's own record is never overwritten.
 */
export async function settleRun(
  sql: Tx,
  id: string,
  status: Exclude<RunStatus, 'running' | 'waiting_for_approval'>,
  error: string | null,
  state: RunState | null = null,
): Promise<boolean> {
  const rows = await sql`
    update workflow_runs
    set status = ${status}, error = ${error}, finished_at = now(), snapshot = null, checked_at = null,
        state = ${state ? sql.json(state as unknown as Parameters<Tx['json']>[0]) : null}
    where id = ${id} and finished_at is null
    returning id`;
  return rows.length > 0;
}

/** The snapshot of a run that has not ended: what its execution is (or was) started with. */
export async function pendingSnapshot(sql: Tx, id: string): Promise<RunSnapshot | null> {
  const [row] = await sql<{ snapshot: RunSnapshot | null }[]>`
    select snapshot from workflow_runs where id = ${id} and finished_at is null`;
  return row?.snapshot ?? null;
}

/** What the sweep needs of a run that has not ended. */
export interface UnsettledRun {
  id: string;
  started_at: Date;
}

/**
 * Claims up to `limit` runs that have not ended, older than `minAgeSeconds` (a start in progress
 * is left alone) and not checked in the last `recheckSeconds`, least recently checked first.
 * The claim is the `checked_at` stamp, so replicas sweeping together never check one row twice.
 */
export async function claimUnsettledRuns(
  sql: Tx,
  opts: { minAgeSeconds: number; recheckSeconds: number; limit: number },
): Promise<UnsettledRun[]> {
  return sql<UnsettledRun[]>`
    update workflow_runs r set checked_at = now()
    from (
      select id from workflow_runs
      where finished_at is null
        and started_at < now() - make_interval(secs => ${opts.minAgeSeconds})
        and (checked_at is null or checked_at < now() - make_interval(secs => ${opts.recheckSeconds}))
      order by checked_at nulls first
      limit ${opts.limit}
      for update skip locked
    ) c
    where r.id = c.id
    returning r.id, r.started_at`;
}

export async function findRun(
  sql: Tx,
  orgId: string,
  workflowId: string,
  id: string,
): Promise<WorkflowRunRow | null> {
  const [row] = await sql<WorkflowRunRow[]>`
    select ${sql.unsafe(ROW_COLUMNS)} from workflow_runs where id = ${id} and workflow_id = ${workflowId} and org_id = ${orgId}`;
  return row ?? null;
}

/** Newest first; `before` is the last id of the previous page. */
export async function listRuns(
  sql: Tx,
  orgId: string,
  workflowId: string,
  opts: { before?: string | undefined; limit: number },
): Promise<WorkflowRunRow[]> {
  return sql<WorkflowRunRow[]>`
    select ${sql.unsafe(ROW_COLUMNS)} from workflow_runs
    where workflow_id = ${workflowId} and org_id = ${orgId}
      ${opts.before ? sql`and id < ${opts.before}` : sql``}
    order by id desc
    limit ${opts.limit}`;
}

/**
 * The run id for this delivery and workflow: chosen on the first delivery, the same on every
 * redelivery, so starting it again is a no-op (Temporal rejects a duplicate workflow id).
 */
export async function claimDelivery(
  sql: Tx,
  deliveryId: string,
  workflowId: string,
  runId: string,
): Promise<string> {
  await sql`
    insert into tracker_deliveries (delivery_id, workflow_id, run_id)
    values (${deliveryId}, ${workflowId}, ${runId})
    on conflict do nothing`;
  const [row] = await sql<{ run_id: string }[]>`
    select run_id from tracker_deliveries where delivery_id = ${deliveryId} and workflow_id = ${workflowId}`;
  return row!.run_id;
}

/** Filters of the organization-wide run list (the Workflow runs page). */
export interface RunFilter {
  workflowIds: string[];
  status?: string | undefined;
  trigger?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  before?: string | undefined;
  limit: number;
}

/** Runs of these workflows, newest first (run ids are ULIDs, so id order is start order). */
export async function listOrgRuns(sql: Tx, orgId: string, f: RunFilter): Promise<WorkflowRunRow[]> {
  if (f.workflowIds.length === 0) return [];
  return sql<WorkflowRunRow[]>`
    select ${sql.unsafe(ROW_COLUMNS)} from workflow_runs
    where org_id = ${orgId} and workflow_id in ${sql(f.workflowIds)}
      ${f.status ? sql`and status = ${f.status}` : sql``}
      ${f.trigger ? sql`and trigger = ${f.trigger}` : sql``}
      ${f.from ? sql`and started_at >= ${f.from}` : sql``}
      ${f.to ? sql`and started_at < ${f.to}` : sql``}
      ${f.before ? sql`and id < ${f.before}` : sql``}
    order by id desc
    limit ${f.limit}`;
}
