import type { DatabaseRow } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { currentApprovers, type QueryRequestRow } from '../store/query-requests.ts';
import { canSee } from './access.ts';
import { type ApproverRole, roleMayApprove } from './risk-rules.ts';
import type { BypassRequest, QueryActor } from './types.ts';

/**
 * The users whose approvals count now: given on the current revision (an edit voids earlier
 * ones), not the author, still active in the organization, still able to see the database, and
 * holding the role the request's risk level asks of its approvers (risk-rules.ts), as they hold
 * it now. Checked again whenever the query is about to run.
 */
export async function validApprovers(
  sql: Tx,
  req: Pick<QueryRequestRow, 'id' | 'org_id' | 'revision' | 'author_user_id' | 'approver_role'>,
  db: DatabaseRow,
  approverRole: ApproverRole | null = req.approver_role,
): Promise<string[]> {
  const out: string[] = [];
  for (const a of await currentApprovers(sql, req)) {
    if (!roleMayApprove(a.role, approverRole)) continue;
    if (await canSee(sql, db, { kind: 'user', userId: a.user_id, role: a.role })) out.push(a.user_id);
  }
  return out;
}

/**
 * Why a bypass is refused, or null when it is allowed. SPEC.md 2.2: a super admin, on their own
 * query, on a database with review_bypass_allowed, explicitly acknowledging the override.
 */
export function bypassRefusal(
  actor: QueryActor,
  authorUserId: string,
  db: DatabaseRow,
  bypass: BypassRequest,
): string | null {
  if (actor.kind !== 'user' || actor.role !== 'super_admin') return 'only a super admin may bypass review';
  // DEVIATION (stricter than SPEC.md): no API key bypasses — neither the super admin's own key
  // nor one acting for them; the override needs the super admin's own token or session.
  if (actor.viaApiKeyId)
    return 'a review bypass needs the super admin themself, not an API key acting for them';
  if (actor.userId !== authorUserId) return 'a super admin may bypass review only on their own query';
  if (!db.review_bypass_allowed) return `database ${db.name} does not allow review bypass`;
  if (bypass.acknowledged !== true)
    return 'bypassing review must be acknowledged explicitly (bypass_review.acknowledge_override: true)';
  return null;
}
