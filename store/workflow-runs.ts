import type { RunState, RunStatus, RunTrigger } from '../workflows/types.ts';
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

export type NewRun = Pick<
  WorkflowRunRow,
  'id' | 'workflow_id' | 'org_id' | 'trigger' | 'initiator_user_id' | 'initiator_api_key_id' | 'inputs'
>;

/** Records a run as started; a second insert of the same id (a retried activity) changes nothing. */
export async function insertRun(sql: Tx, run: NewRun): Promise<void> {
  await sql`
    insert into workflow_runs (id, workflow_id, org_id, trigger, initiator_user_id, initiator_api_key_id, inputs, status)
    values (${run.id}, ${run.workflow_id}, ${run.org_id}, ${run.trigger}, ${run.initiator_user_id},
            ${run.initiator_api_key_id}, ${sql.json(run.inputs)}, 'running')
    on conflict (id) do nothing`;
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
        finished_at = coalesce(finished_at, now())
    where id = ${id}`;
}

/** Marks a run that could not be started (Temporal refused or was unreachable). */
export async function failRunStart(sql: Tx, id: string, error: string): Promise<void> {
  await sql`update workflow_runs set status = 'failed', error = ${error}, finished_at = now() where id = ${id}`;
}

export async function findRun(
  sql: Tx,
  orgId: string,
  workflowId: string,
  id: string,
): Promise<WorkflowRunRow | null> {
  const [row] = await sql<WorkflowRunRow[]>`
    select * from workflow_runs where id = ${id} and workflow_id = ${workflowId} and org_id = ${orgId}`;
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
    select * from workflow_runs
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
    select * from workflow_runs
    where org_id = ${orgId} and workflow_id in ${sql(f.workflowIds)}
      ${f.status ? sql`and status = ${f.status}` : sql``}
      ${f.trigger ? sql`and trigger = ${f.trigger}` : sql``}
      ${f.from ? sql`and started_at >= ${f.from}` : sql``}
      ${f.to ? sql`and started_at < ${f.to}` : sql``}
      ${f.before ? sql`and id < ${f.before}` : sql``}
    order by id desc
    limit ${f.limit}`;
}
