// Starting a run's Temporal execution, shared by the API's start and the run sweep.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { TemporalHandle } from '../core/temporal.ts';
import type { interpretWorkflow } from '../workflows/interpret.ts';
import { runSearchAttributes } from '../workflows/search-attributes.ts';
import type { RunSnapshot } from '../workflows/types.ts';

/**
 * Starts the Temporal execution of a run from its snapshot. Idempotent: the workflow id is the run
 * id, an execution already running under it is the one (USE_EXISTING), and one that has ended is
 * never started again (REJECT_DUPLICATE), so a redelivered tracker webhook, a retried request and
 * the sweep may all call it.
 */
export async function startExecution(temporal: TemporalHandle, snapshot: RunSnapshot): Promise<void> {
  try {
    await temporal.client.workflow.start<typeof interpretWorkflow>('interpretWorkflow', {
      workflowId: snapshot.runId,
      taskQueue: temporal.taskQueue,
      args: [snapshot],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: runSearchAttributes(snapshot.workflowId, snapshot.orgId),
      staticSummary: `${snapshot.workflowName} (${snapshot.trigger})`,
      // The snapshot is this release's: only workers of the same release may run it (a worker of
      // another one would read it with other rules). Until one polls, the run waits in the queue.
      ...(temporal.version ? { versioningOverride: { pinnedTo: temporal.version } } : {}),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}
