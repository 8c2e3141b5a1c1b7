// The frozen copy of a definition a run executes (pure: used by the API and by the cron launcher's
// activity, never by the bundled interpreter).
import type { WorkflowRow } from '../store/workflows.ts';
import type { RunSnapshot, RunTrigger } from '../workflows/types.ts';

export interface SnapshotConfig {
  baseUrl: string;
  temporalUiUrl: string | null;
  temporalNamespace: string;
}

/** A run's snapshot of `wf`; API header values stay sealed (only the api activity opens them). */
export function buildSnapshot(
  config: SnapshotConfig,
  wf: WorkflowRow,
  run: { runId: string; trigger: RunTrigger; initiatorUserId: string | null; inputs: RunSnapshot['inputs'] },
): RunSnapshot {
  return {
    runId: run.runId,
    orgId: wf.org_id,
    workflowId: wf.id,
    workflowName: wf.name,
    trigger: run.trigger,
    initiatorUserId: run.initiatorUserId,
    inputs: run.inputs,
    steps: wf.steps,
    runUrl: runUrl(config, wf.id, run.runId),
  };
}

/** Where a person looks at a run: the Temporal UI when configured, else the run's API resource. */
export function runUrl(config: SnapshotConfig, workflowId: string, runId: string): string {
  if (config.temporalUiUrl) {
    const base = config.temporalUiUrl.replace(/\/+$/, '');
    return `${base}/namespaces/${encodeURIComponent(config.temporalNamespace)}/workflows/${runId}`;
  }
  return `${config.baseUrl}/api/v1/workflows/${workflowId}/runs/${runId}`;
}

/** The envelope context of an API step header value: bound to its workflow, step and name. */
export function headerContext(workflowId: string, stepId: string, name: string): string {
  return `${workflowId}/${stepId}/header/${name.toLowerCase()}`;
}
