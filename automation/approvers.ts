// Approval steps that can complete: every approver a step lists exists in the organization, and
// enough people may approve to reach `reviews_required` (otherwise a run waits forever, or until
// its expiry, for approvals nobody can give).
import type { FieldError } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { listUsers, type UserRow } from '../store/users.ts';
import type { Permission } from '../workflows/types.ts';

interface StepLike {
  action: { __type__: string; reviews_required?: number };
  permissions: readonly Permission[];
}

/** Adds a field error for each unknown approver and each approval that can never be reached. */
export async function approverProblems(
  sql: Tx,
  orgId: string,
  steps: readonly StepLike[],
  errors: FieldError[],
): Promise<void> {
  if (!steps.some((s) => s.action.__type__ === 'approval')) return;
  const people = await listUsers(sql, orgId);
  const byId = new Map(people.map((u) => [u.id, u]));
  for (const [i, step] of steps.entries()) {
    if (step.action.__type__ !== 'approval') continue;
    for (const [j, p] of step.permissions.entries()) {
      if ('user_id' in p && !byId.has(p.user_id))
        errors.push({
          path: `steps.${i}.permissions.${j}.user_id`,
          message: 'no such person in this organization',
        });
    }
    const required = step.action.reviews_required ?? 1;
    // The same rule the run applies (workflows/approval.ts): each approver counts once, and a
    // disabled person cannot sign in to approve.
    const able = people.filter((u) => u.disabled_at === null && mayApprove(u, step.permissions)).length;
    if (required > able)
      errors.push({
        path: `steps.${i}.action.reviews_required`,
        message: `needs ${required} approvals but only ${able} ${able === 1 ? 'person' : 'people'} may approve (${who(step.permissions)}): lower it or add approvers`,
      });
  }
}

function mayApprove(u: UserRow, permissions: readonly Permission[]): boolean {
  if (permissions.length === 0) return u.role === 'admin' || u.role === 'super_admin';
  return permissions.some((p) => ('user_id' in p ? p.user_id === u.id : p.role === u.role));
}

function who(permissions: readonly Permission[]): string {
  if (permissions.length === 0) return 'admins and super admins';
  return permissions.map((p) => ('user_id' in p ? `user ${p.user_id}` : `role ${p.role}`)).join(', ');
}
