// What an approver sees beside the Approve button: who started the run, with which
// inputs, and what the next step will do — its SQL or HTTP request with the values filled in from
// what this approver may see of the run (the state given here is already redacted for them).
// Display only: a query step still binds its values as parameters when it runs.
import { type EvalContext, renderText } from '../expr/index.ts';
import type { ApprovalRefusal } from '../workflows/approval.ts';
import { refuseApproval } from '../workflows/approval.ts';
import type { RunState, StepDefinition } from '../workflows/types.ts';

export interface NextStepPreview {
  name: string;
  type: string;
  /** The statement, request or message with `${}` filled in (or as written where it cannot be). */
  text: string;
}

export function previewNextStep(
  steps: readonly StepDefinition[],
  waitingStep: string,
  state: RunState,
  inputs: Record<string, string | number | boolean>,
): NextStepPreview | null {
  const at = steps.findIndex((s) => s.name === waitingStep);
  const next = at >= 0 ? steps[at + 1] : undefined;
  if (!next) return null;
  const ctx: EvalContext = {
    inputs,
    steps: Object.fromEntries(
      state.steps.map((s) => [
        s.name,
        s.status === 'succeeded' ? { status: 'succeeded', output: s.output } : { status: 'pending' },
      ]),
    ) as EvalContext['steps'],
  };
  const fill = (template: string) => {
    try {
      return renderText(template, ctx);
    } catch {
      return template;
    }
  };
  const a = next.action as unknown as Record<string, unknown> & { __type__: string };
  const text =
    a.__type__ === 'query'
      ? fill(String(a.query ?? ''))
      : a.__type__ === 'api'
        ? `${String(a.method ?? 'GET')} ${String(a.endpoint ?? '')}${a.body ? `\n\n${fill(String(a.body))}` : ''}`
        : a.__type__ === 'chat' || a.__type__ === 'chat_reply'
          ? fill(String(a.message ?? ''))
          : a.__type__ === 'condition'
            ? String(a.expression ?? '')
            : '';
  return { name: next.name, type: a.__type__, text };
}

/** Whether this person may decide on the waiting step, by the same rule the workflow enforces. */
export function approvalRefusal(
  steps: readonly StepDefinition[],
  waitingStep: string,
  who: { user_id: string; role: 'super_admin' | 'admin' | 'member' },
  initiatorUserId: string | null,
  state: RunState,
): ApprovalRefusal {
  const step = steps.find((s) => s.name === waitingStep);
  return refuseApproval({
    who: { ...who, email: '', decision: 'approve', comment: null },
    waitingStep,
    permissions: step?.permissions ?? [],
    initiatorUserId,
    approvals: state.approvals,
  });
}
