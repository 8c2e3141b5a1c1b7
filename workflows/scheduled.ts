// A cron firing (one Temporal Schedule per workflow) starts this small launcher. It snapshots the
// definition and starts the interpreter as a child whose workflow id is the new run id, so cron
// runs have `run_` ids like every other run (a Schedule would otherwise append a timestamp).
import { ParentClosePolicy, proxyActivities, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { BOOKKEEPING_OPTIONS } from './activity-options.ts';
import { workflowRunId } from './ids.ts';
import { interpretWorkflow } from './interpret.ts';
import { runSearchAttributes } from './search-attributes.ts';

const { beginScheduledRun } = proxyActivities<Activities>(BOOKKEEPING_OPTIONS);

/** Starts one cron run of `workflowId`; returns its run id, or null when the workflow is archived. */
export async function scheduledRunWorkflow(args: { workflowId: string }): Promise<string | null> {
  const snapshot = await beginScheduledRun({ workflowId: args.workflowId, runId: workflowRunId() });
  if (snapshot === null) return null;
  await startChild(interpretWorkflow, {
    workflowId: snapshot.runId,
    args: [snapshot],
    // The run outlives this launcher, which ends as soon as the child has started.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: runSearchAttributes(snapshot.workflowId, snapshot.orgId),
    staticSummary: `${snapshot.workflowName} (cron)`,
  });
  return snapshot.runId;
}
