// Who a workflow query step runs as, decided before its statement enters the pipeline. It is an
// access decision, so it is made here, beside the pipeline it feeds; with the credential's target
// (governance/access.ts credentialTarget) the step's activity (activities/query.ts) reads nothing
// from the store itself.
import type { Tx } from '../store/db.ts';
import { findUserById } from '../store/users.ts';
import type { QueryActor } from './types.ts';

/** The run a step belongs to, and the person who started it (none: the organization's own run). */
export interface StepRun {
  orgId: string;
  runId: string;
  workflowId: string;
  initiatorUserId?: string | null;
}

/**
 * Who the step runs as, read now rather than when the run started: a role changed since then
 * applies, and a person disabled or deleted since then no longer has queries run as them (null).
 */
export async function stepActor(sql: Tx, run: StepRun): Promise<QueryActor | null> {
  if (!run.initiatorUserId) return { kind: 'workflow_run', runId: run.runId, workflowId: run.workflowId };
  const user = await findUserById(sql, run.initiatorUserId);
  if (!user || user.org_id !== run.orgId || user.disabled_at || user.deleted_at) return null;
  // The audit entry names the person and the run it came from (audit/events.ts).
  return {
    kind: 'user',
    userId: user.id,
    role: user.role,
    workflowRun: { runId: run.runId, workflowId: run.workflowId },
  };
}
