// Who a data-protection policy protects, so that a page can say who loses protection before a
// rule, a policy or an assignment is removed.
import type { UserRow } from '../../store/users.ts';
import type { PolicyView } from './policies.ts';

type Assignment = Pick<PolicyView['assignments'][number], 'policy_id' | 'user_id' | 'role'>;

/**
 * The people `policyId` applies to, by the pipeline's own order (store/grants.ts
 * findAccessTarget): a personal assignment first, else the assignment of the person's role.
 */
export function peopleCovered(assignments: Assignment[], people: UserRow[], policyId: string): UserRow[] {
  const personal = new Map<string, string>();
  const byRole = new Map<string, string>();
  for (const a of assignments) {
    if (a.user_id) personal.set(a.user_id, a.policy_id);
    else if (a.role) byRole.set(a.role, a.policy_id);
  }
  return people.filter((p) => (personal.get(p.id) ?? byRole.get(p.role)) === policyId);
}

/** Every assignment on the database, across its policies. */
export function assignmentsOf(policies: PolicyView[]): Assignment[] {
  return policies.flatMap((p) => p.assignments);
}

/**
 * The people who would no longer be under `policyId` were its assignments replaced by `next`
 * (setAssignments moves a user or role away from any other policy of the database).
 */
export function peopleLosingPolicy(
  policies: PolicyView[],
  people: UserRow[],
  policyId: string,
  next: { users: string[]; roles: string[] },
): UserRow[] {
  const before = peopleCovered(assignmentsOf(policies), people, policyId);
  const kept = assignmentsOf(policies).filter(
    (a) =>
      a.policy_id !== policyId &&
      !(a.user_id && next.users.includes(a.user_id)) &&
      !(a.role && next.roles.includes(a.role)),
  );
  const after = peopleCovered(
    [
      ...kept,
      ...next.users.map((u) => ({ policy_id: policyId, user_id: u, role: null })),
      ...next.roles.map((r) => ({ policy_id: policyId, user_id: null, role: r as UserRow['role'] })),
    ],
    people,
    policyId,
  );
  const still = new Set(after.map((p) => p.id));
  return before.filter((p) => !still.has(p.id));
}
