// Workflow approvals waiting for a person: the inbox's list (runs paused at an approval step this
// person may decide) and, on one run, what the approver sees beside the button. The rule itself
// is workflows/approval.ts (the run enforces it again when the decision arrives); this only says
// in advance whether the button will work.

import type { Caller, PersonActor } from '../audit/actors.ts';
import type { Deps } from '../core/deps.ts';
import { findUserById } from '../store/users.ts';
import { listWorkflows, type WorkflowRow } from '../store/workflows.ts';
import { approvalRefusal, type NextStepPreview, previewNextStep } from './approval-context.ts';
import { getRun, listReadableRuns, type RunView } from './runs.ts';

type ApprovalDeps = Pick<Deps, 'sql' | 'config' | 'temporal' | 'logger'>;

/** How many waiting runs the inbox looks into: each costs a read of the run's live state. */
const INBOX_RUNS = 20;

export interface WaitingApproval {
  runId: string;
  workflowId: string;
  workflowName: string;
  step: string;
  startedAt: Date;
  /** Who started the run, as the approver reads it. */
  initiator: string;
  /** The run's inputs as this approver may see them ({} when hidden). */
  inputs: Record<string, string | number | boolean>;
  /** Why the inputs are hidden from this approver (their data-protection policy), else null. */
  inputsHidden: string | null;
  /** What the next step will do if approved, filled in from what this approver may see. */
  next: NextStepPreview | null;
}

/**
 * Runs waiting on an approval step this person may decide, newest first. Only runs of workflows
 * they may read; the waiting step lives in the run's state, which Temporal holds while it is live.
 */
export async function approvalsWaitingFor(
  deps: ApprovalDeps,
  caller: Caller<PersonActor>,
): Promise<WaitingApproval[]> {
  const workflows = await listWorkflows(deps.sql, caller.orgId, { includeArchived: false, limit: 500 });
  const waiting = await listReadableRuns(deps, caller, workflows, {
    status: 'waiting_for_approval',
    limit: 100,
  });
  const found = await Promise.all(
    waiting.slice(0, INBOX_RUNS).map(async (run): Promise<WaitingApproval | null> => {
      const wf = workflows.find((w) => w.id === run.workflow_id);
      const view = wf ? await getRun(deps, caller, wf.id, run.id).catch(() => null) : null;
      const step = view?.state?.steps.find((st) => st.type === 'approval' && st.status === 'waiting');
      if (!wf || !view?.state || !step) return null;
      const refusal = approvalRefusal(
        wf.steps,
        step.name,
        { user_id: caller.actor.userId, role: caller.actor.role },
        run.initiator_user_id,
        view.state,
      );
      if (refusal) return null;
      const context = await approvalContext(deps, caller, wf, view);
      return {
        runId: run.id,
        workflowId: wf.id,
        workflowName: wf.name,
        step: step.name,
        startedAt: run.started_at,
        initiator: context?.initiator ?? run.trigger,
        inputs: view.row.inputs,
        inputsHidden: view.row.inputs_hidden,
        next: context?.next ?? null,
      };
    }),
  );
  return found.filter((x) => x !== null);
}

export interface ApprovalContext {
  step: string;
  /** Who started the run, as the approver reads it. */
  initiator: string;
  next: NextStepPreview | null;
  /** Why this person may not decide, or null when they may. */
  refusal: string | null;
}

/** What the approver sees of a run waiting at an approval step; null when it waits on none. */
export async function approvalContext(
  deps: Pick<Deps, 'sql'>,
  caller: Caller<PersonActor>,
  wf: WorkflowRow | null,
  view: RunView,
): Promise<ApprovalContext | null> {
  const { row, state } = view;
  const waiting = state?.steps.find((s) => s.type === 'approval' && s.status === 'waiting') ?? null;
  if (!waiting || !state || !wf) return null;
  const initiator = row.initiator_user_id ? await findUserById(deps.sql, row.initiator_user_id) : null;
  return {
    step: waiting.name,
    // A key's run is its owner's; the key is named beside them.
    initiator: initiator
      ? `${initiator.email}${row.initiator_api_key_id ? ' (with an API key)' : ''}`
      : row.initiator_api_key_id
        ? 'an API key'
        : row.trigger,
    next: previewNextStep(wf.steps, waiting.name, state, row.inputs),
    refusal:
      approvalRefusal(
        wf.steps,
        waiting.name,
        { user_id: caller.actor.userId, role: caller.actor.role },
        row.initiator_user_id,
        state,
      )?.message ?? null,
  };
}
