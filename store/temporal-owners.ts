import type { Tx } from './db.ts';
import type { WorkflowRunRow } from './workflow-runs.ts';

/**
 * The organization a Temporal workflow id belongs to: a run (`run_…`, the run's id) or a cron
 * launcher (`cron-wf_…-<time>`, its workflow's id); null for any other id.
 */
export async function orgOfTemporalWorkflow(sql: Tx, temporalWorkflowId: string): Promise<string | null> {
  if (temporalWorkflowId.startsWith('run_')) {
    const [row] = await sql<
      { org_id: string }[]
    >`select org_id from workflow_runs where id = ${temporalWorkflowId}`;
    return row?.org_id ?? null;
  }
  const cron = /^cron-(wf_[0-9A-Za-z]+)/.exec(temporalWorkflowId);
  if (cron) {
    const [row] = await sql<{ org_id: string }[]>`select org_id from workflows where id = ${cron[1]!}`;
    return row?.org_id ?? null;
  }
  return null;
}

/** A run of the organization by its id alone (the Temporal workflow id names no definition). */
export async function findOrgRun(sql: Tx, orgId: string, runId: string): Promise<WorkflowRunRow | null> {
  const [row] = await sql<
    WorkflowRunRow[]
  >`select * from workflow_runs where id = ${runId} and org_id = ${orgId}`;
  return row ?? null;
}
