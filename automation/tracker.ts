// The tracker label trigger (SPEC.md 2.1 Triggers 4): a verified webhook starts one run of each
// active workflow whose label the issue just gained, reading inputs from `#### <input>` headings.
import { recordEvent } from '../audit/events.ts';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { addedLabelIds, type IssueEvent, readIssueInputs } from '../integrations/tracker.ts';
import { newId } from '../store/ids.ts';
import { claimDelivery } from '../store/workflow-runs.ts';
import { workflowsForTrackerLabels } from '../store/workflows.ts';
import { launch, typedInputs } from './runs.ts';

export interface TrackerOutcome {
  /** Runs this delivery stands for (the same ids on every redelivery). */
  runs: string[];
  /** Workflows that matched but could not start, with the reason (e.g. an input missing from the issue). */
  skipped: Array<{ workflow_id: string; reason: string }>;
}

export async function handleIssueEvent(
  deps: Pick<Deps, 'sql' | 'config' | 'temporal' | 'logger'>,
  deliveryId: string,
  event: IssueEvent,
): Promise<TrackerOutcome> {
  const outcome: TrackerOutcome = { runs: [], skipped: [] };
  const added = addedLabelIds(event);
  for (const wf of await workflowsForTrackerLabels(deps.sql, added)) {
    let inputs: Record<string, string | number | boolean>;
    try {
      const raw = readIssueInputs(
        event.data.description ?? '',
        wf.inputs.map((i) => i.key),
      );
      inputs = typedInputs(wf, raw, true);
    } catch (err) {
      // The issue itself is wrong: retrying the delivery cannot help, so it is acknowledged and logged.
      const reason = err instanceof AppError ? err.detail : 'unreadable inputs';
      deps.logger.warn({ workflowId: wf.id, deliveryId, reason }, 'tracker trigger skipped');
      outcome.skipped.push({ workflow_id: wf.id, reason });
      continue;
    }
    // The run id is fixed by the first delivery; a redelivery starts the same id, which is a no-op.
    const runId = await claimDelivery(deps.sql, deliveryId, wf.id, newId('run'));
    await launch(
      deps,
      wf,
      { runId, trigger: 'tracker', initiatorUserId: null, initiatorApiKeyId: null, inputs },
      // No person starts it: the run is its own actor, the delivery that triggered it named.
      (tx) =>
        recordEvent(tx, {
          orgId: wf.org_id,
          actor: { kind: 'workflow_run', runId, workflowId: wf.id },
          origin: 'workflow',
          event: 'run.started',
          subject: {
            workflow_id: wf.id,
            run_id: runId,
            trigger: 'tracker',
            input_keys: Object.keys(inputs),
            delivery_id: deliveryId,
          },
          outcome: 'allowed',
          detail: `started ${runId} (tracker delivery ${deliveryId})`,
        }),
    );
    outcome.runs.push(runId);
  }
  return outcome;
}
