// The approval rules, pure so they run in the update validator and in unit tests.
import type { ApprovalInput, ApprovalRecord, Permission } from './types.ts';

export type ApprovalRefusal = { kind: 'not_permitted' | 'not_waiting'; message: string } | null;

/**
 * Why `who` may not decide on the approval step `step`, or null when they may. Empty
 * permissions admit admins and super admins (workflows/README.md "Approvals").
 */
export function refuseApproval(args: {
  who: ApprovalInput;
  waitingStep: string | null;
  permissions: readonly Permission[];
  initiatorUserId: string | null;
  approvals: readonly ApprovalRecord[];
}): ApprovalRefusal {
  const { who, waitingStep, permissions, initiatorUserId, approvals } = args;
  if (waitingStep === null) return { kind: 'not_waiting', message: 'the run is not waiting for an approval' };
  // Four-eyes rule: whoever started the run cannot also approve it.
  if (initiatorUserId !== null && who.user_id === initiatorUserId) {
    return { kind: 'not_permitted', message: 'the person who started the run may not approve it' };
  }
  if (!isPermitted(who, permissions)) {
    return { kind: 'not_permitted', message: `you are not among the approvers of step ${waitingStep}` };
  }
  if (approvals.some((a) => a.step === waitingStep && a.user_id === who.user_id)) {
    return { kind: 'not_permitted', message: `you have already decided on step ${waitingStep}` };
  }
  return null;
}

function isPermitted(who: ApprovalInput, permissions: readonly Permission[]): boolean {
  if (permissions.length === 0) return who.role === 'admin' || who.role === 'super_admin';
  return permissions.some((p) => ('user_id' in p ? p.user_id === who.user_id : p.role === who.role));
}
