// Approval steps that can complete: every approver a step lists exists in the organization, and a
// step that lists its approvers by name lists at least `reviews_required` of them (otherwise a run
// waits forever, or until its expiry, for approvals nobody can give).
import type { FieldError } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { listUsers } from '../store/users.ts';
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
    // Only a rule of named people has a fixed number of approvers. A role's holders change as
    // people join, so a role (or the default, admins) is never refused for being short today.
    if (step.permissions.length === 0 || step.permissions.some((p) => !('user_id' in p))) continue;
    const required = step.action.reviews_required ?? 1;
    // Each approver counts once (workflows/approval.ts), and a disabled person cannot approve.
    const able = new Set(
      step.permissions.flatMap((p) =>
        'user_id' in p && byId.get(p.user_id)?.disabled_at === null ? [p.user_id] : [],
      ),
    ).size;
    if (required > able)
      errors.push({
        path: `steps.${i}.action.reviews_required`,
        message: `needs ${required} approvals but only ${able} ${able === 1 ? 'person' : 'people'} may approve: lower it or list more approvers`,
      });
  }
}
