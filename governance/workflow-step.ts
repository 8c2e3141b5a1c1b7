// What a workflow query step asks of governance before its statement enters the pipeline: the
// database its credential belongs to (the SQL is rendered in that engine's placeholder style) and
// who it runs as. Both are access decisions, so they are made here, beside the pipeline they feed,
// and the step's activity (activities/query.ts) reads nothing from the store itself.
import type { AdapterName } from '../adapters/types.ts';
import type { Tx } from '../store/db.ts';
import { findUserById } from '../store/users.ts';
import { findCredentialTarget } from '../store/workflows.ts';
import type { QueryActor } from './types.ts';

/** The database of a step's credential, within the organization, and the credential's timeout. */
export interface StepTarget {
  database_id: string;
  adapter: AdapterName;
  timeout: number | null;
}

/** The target of a step's credential; null when the credential (or its database) is gone. */
export function stepTarget(sql: Tx, orgId: string, credentialId: string): Promise<StepTarget | null> {
  return findCredentialTarget(sql, orgId, credentialId);
}

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
