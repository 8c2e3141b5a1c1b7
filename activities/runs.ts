// Run bookkeeping: the store learns how every run goes; cron firings become runs here.

import { inTransaction, recordEvent } from '../audit/events.ts';
import { buildSnapshot } from '../automation/snapshot.ts';
import type { Deps } from '../core/deps.ts';
import { parseInputs } from '../expr/index.ts';
import * as runs from '../store/workflow-runs.ts';
import { findWorkflowById } from '../store/workflows.ts';
import type { RunSnapshot, RunState } from '../workflows/types.ts';

type RunDeps = Pick<Deps, 'sql' | 'config'>;

export function setRunStatus(
  deps: RunDeps,
  runId: string,
  status: 'running' | 'waiting_for_approval',
): Promise<void> {
  return runs.setRunStatus(deps.sql, runId, status);
}

export function finishRun(deps: RunDeps, runId: string, state: RunState): Promise<void> {
  return runs.finishRun(deps.sql, runId, state);
}

/**
 * Snapshots the definition for a cron run and records the run; null when the workflow is archived
 * or gone (a firing that raced the schedule's deletion). The run id comes from the launcher, so a
 * retried activity records the same run once.
 */
export async function beginScheduledRun(
  deps: RunDeps,
  input: { workflowId: string; runId: string },
): Promise<RunSnapshot | null> {
  const wf = await findWorkflowById(deps.sql, input.workflowId);
  if (!wf || wf.archived_at !== null) return null;
  // A cron run has no one to ask for inputs: it runs with their defaults, and without a value for
  // the others (a step that needs one fails, naming it).
  const defaulted = wf.inputs.filter((d) => d.default !== undefined && d.default !== null);
  const inputs = parseInputs(defaulted, {}, { fromText: false });
  const unsetInputs = wf.inputs.filter((d) => !defaulted.includes(d)).map((d) => d.key);
  const snapshot = {
    ...buildSnapshot(deps.config, wf, { runId: input.runId, trigger: 'cron', initiatorUserId: null, inputs }),
    ...(unsetInputs.length > 0 ? { unsetInputs } : {}),
  };
  const row = {
    id: input.runId,
    workflow_id: wf.id,
    org_id: wf.org_id,
    trigger: 'cron' as const,
    initiator_user_id: null,
    initiator_api_key_id: null,
    inputs,
  };
  // The run and its start event in one transaction; a retried activity records neither again.
  // No person starts it: the run is its own actor.
  await inTransaction(deps.sql, async (tx) => {
    if (!(await runs.insertRun(tx, row, snapshot))) return;
    await recordEvent(tx, {
      orgId: wf.org_id,
      actor: { kind: 'workflow_run', runId: input.runId, workflowId: wf.id },
      origin: 'workflow',
      event: 'run.started',
      subject: { workflow_id: wf.id, run_id: input.runId, trigger: 'cron', input_keys: Object.keys(inputs) },
      outcome: 'allowed',
      detail: `started ${input.runId} (cron schedule)`,
    });
  });
  return snapshot;
}
