// Response shapes of workflows and runs (SPEC.md 2.1; workflows/README.md). Header values are
// never shown: each appears with the value null, which a PATCH may send back to keep it.
import type { WorkflowRunRow } from '../store/workflow-runs.ts';
import type { WorkflowRow } from '../store/workflows.ts';
import type { RunState } from '../workflows/types.ts';

export function presentWorkflow(w: WorkflowRow) {
  return {
    id: w.id,
    name: w.name,
    group: w.group_name,
    cron_schedule: w.cron_schedule,
    trigger_tracker_label: w.tracker_label_id ? { id: w.tracker_label_id, name: w.tracker_label_name } : null,
    inputs: w.inputs.map((i) => ({ ...i, default: i.default ?? null })),
    steps: w.steps.map((s) => ({
      id: s.id,
      name: s.name,
      condition: s.condition,
      action:
        s.action.__type__ === 'api'
          ? { ...s.action, headers: Object.fromEntries(Object.keys(s.action.headers).map((k) => [k, null])) }
          : s.action,
      permissions: s.permissions,
    })),
    run_permissions: w.run_permissions,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
    archived_at: w.archived_at?.toISOString() ?? null,
  };
}

/** A run in lists: no step detail. */
export function presentRunSummary(r: WorkflowRunRow & { inputs_hidden?: string | null }) {
  return {
    id: r.id,
    workflow_id: r.workflow_id,
    status: r.status,
    trigger: r.trigger,
    initiated_by: { user_id: r.initiator_user_id, api_key_id: r.initiator_api_key_id },
    inputs: r.inputs,
    /** Why the inputs are left out for this reader (their data-protection policy), else null. */
    inputs_hidden: r.inputs_hidden ?? null,
    error: r.error,
    started_at: r.started_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  };
}

/** One run with each step's status, output, error and timing, and the approvals so far. */
export function presentRun(r: WorkflowRunRow & { inputs_hidden?: string | null }, state: RunState | null) {
  const summary = presentRunSummary(r);
  if (!state) return { ...summary, steps: null, approvals: null };
  // While the run is live its own state is fresher than the row.
  const status = r.finished_at
    ? r.status
    : state.status === 'running' && state.steps.some((s) => s.status === 'waiting')
      ? 'waiting_for_approval'
      : state.status;
  return {
    ...summary,
    status,
    error: summary.error ?? state.error,
    steps: state.steps,
    approvals: state.approvals,
  };
}
