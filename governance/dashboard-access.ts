// Who may see and change a dashboard (SPEC.md 2.3): access questions, so they live with the
// other access rules; dashboards/ asks them.
import { forbidden } from '../core/errors.ts';
import type { UserPrincipal } from '../identity/principal.ts';
import { type DashboardRow, hasDashboardGrant, hasDashboardRoleGrant } from '../store/dashboards.ts';
import type { Tx } from '../store/db.ts';
import type { QueryActor } from './types.ts';

/** The person a dashboard request acts as. */
export type Viewer = Pick<UserPrincipal, 'orgId' | 'userId' | 'role' | 'email'>;

export function actorOfViewer(v: Viewer): QueryActor {
  return { kind: 'user', userId: v.userId, role: v.role };
}

/**
 * SPEC.md 2.3 restricted_access: a restricted dashboard exists only for super admins, the person
 * who created it, users granted it and holders of a role it is shared with; for anyone else it is
 * a 404, never a 403.
 */
export async function canSeeDashboard(sql: Tx, d: DashboardRow, v: Viewer): Promise<boolean> {
  if (!d.restricted_access || v.role === 'super_admin' || d.created_by === v.userId) return true;
  return (await hasDashboardGrant(sql, d.id, v.userId)) || hasDashboardRoleGrant(sql, d.id, v.role);
}

/** Changing a dashboard needs its creator or an admin (who must be able to see it). */
export function requireEditor(d: DashboardRow, v: Viewer): void {
  if (d.created_by !== v.userId && v.role === 'member')
    throw forbidden('only the creator of a dashboard or an admin may change it');
}
