// Dashboards (SPEC.md 2.3, 4.3): create, read, list, replace, archive, delete, and who may see a
// restricted one. Every function acts as a person (a personal token or a web session).
import { changeOf, isEmptyChange } from '../audit/event-types.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import {
  actorOfViewer,
  canSeeDashboard,
  requireEditor,
  type Viewer,
} from '../governance/dashboard-access.ts';
import type { DashboardGrantRow, DashboardRoleGrantRow, DashboardRow } from '../store/dashboards.ts';
import * as store from '../store/dashboards.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { findUserById } from '../store/users.ts';
import { normalizePanels } from './panels.ts';
import type { CreateDashboard, RoleGrantBody, UpdateDashboard } from './schema.ts';

export type { Viewer } from '../governance/dashboard-access.ts';
export { actorOfViewer, canSeeDashboard } from '../governance/dashboard-access.ts';

/** The dashboard if the viewer may see it, else 404. */
export async function visibleDashboard(
  sql: Tx,
  v: Viewer,
  id: string,
  forUpdate = false,
): Promise<DashboardRow> {
  const d = await store.findDashboard(sql, v.orgId, id, forUpdate);
  if (!d || !(await canSeeDashboard(sql, d, v))) throw notFound('no such dashboard');
  return d;
}

export async function createDashboard(sql: Tx, v: Viewer, input: CreateDashboard): Promise<DashboardRow> {
  const panels = await normalizePanels(sql, v.orgId, actorOfViewer(v), input.panels, []);
  return inTransaction(sql, async (tx) => {
    const d = await store.insertDashboard(tx, {
      id: newId('dash'),
      orgId: v.orgId,
      createdBy: v.userId,
      name: input.name,
      restricted_access: input.restricted_access,
      panels,
    });
    await auditDashboard(tx, v, 'dashboard.created', null, d);
    return d;
  });
}

export function getDashboard(sql: Tx, v: Viewer, id: string): Promise<DashboardRow> {
  return visibleDashboard(sql, v, id);
}

/** Dashboards the viewer may see, in id order; archived ones only when asked. */
export async function listDashboards(
  sql: Tx,
  v: Viewer,
  page: { includeArchived: boolean; after?: string | undefined; limit: number },
): Promise<{ items: DashboardRow[]; nextCursor: string | null }> {
  const rows = await store.listDashboards(sql, v.orgId, {
    visibleTo: v.role === 'super_admin' ? null : v.userId,
    includeArchived: page.includeArchived,
    after: page.after,
    limit: page.limit + 1,
  });
  const items = rows.slice(0, page.limit);
  return { items, nextCursor: rows.length > page.limit ? (items.at(-1)?.id ?? null) : null };
}

/** PUT: the fields sent replace the stored ones; `panels`, when sent, replaces every panel. */
export async function updateDashboard(
  sql: Tx,
  v: Viewer,
  id: string,
  input: UpdateDashboard,
): Promise<DashboardRow> {
  return inTransaction(sql, async (tx) => {
    const d = await visibleDashboard(tx, v, id, true);
    requireEditor(d, v);
    const panels =
      input.panels === undefined
        ? d.panels
        : await normalizePanels(tx, v.orgId, actorOfViewer(v), input.panels, d.panels);
    const updated = await store.updateDashboard(tx, d.id, {
      name: input.name ?? d.name,
      restricted_access: input.restricted_access ?? d.restricted_access,
      panels,
    });
    await auditDashboard(tx, v, 'dashboard.updated', d, updated);
    return updated;
  });
}

/** SPEC.md 3: deleting is permanent and irreversible; returns what was deleted. */
export async function deleteDashboard(sql: Tx, v: Viewer, id: string): Promise<DashboardRow> {
  return inTransaction(sql, async (tx) => {
    const d = await visibleDashboard(tx, v, id, true);
    requireEditor(d, v);
    await store.deleteDashboard(tx, d.id);
    await auditDashboard(tx, v, 'dashboard.deleted', d, null);
    return d;
  });
}

/** SPEC.md 2.3 archived_at: archiving sets it (the dashboard leaves the default list), unarchiving clears it. */
export async function setDashboardArchived(
  sql: Tx,
  v: Viewer,
  id: string,
  archived: boolean,
): Promise<DashboardRow> {
  return inTransaction(sql, async (tx) => {
    const d = await visibleDashboard(tx, v, id, true);
    requireEditor(d, v);
    const row = await store.setArchived(tx, d.id, archived);
    if ((d.archived_at !== null) !== archived)
      await recordEvent(tx, {
        orgId: v.orgId,
        actor: actorOfViewer(v),
        origin: 'user',
        event: 'dashboard.archived',
        subject: { dashboard_id: d.id, archived },
        outcome: 'allowed',
        detail: `${archived ? 'archived' : 'unarchived'} ${d.name}`,
      });
    return row;
  });
}

export async function listGrants(sql: Tx, v: Viewer, id: string): Promise<DashboardGrantRow[]> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  return store.listDashboardGrants(sql, d.id);
}

/** Lets a user of the same organization see a restricted dashboard; granting twice changes nothing. */
export async function grantDashboard(
  sql: Tx,
  v: Viewer,
  id: string,
  userId: string,
): Promise<DashboardGrantRow[]> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  const user = await findUserById(sql, userId);
  if (!user || user.org_id !== v.orgId)
    throw validationFailed([{ path: 'user_id', message: 'no such user in this organization' }]);
  return inTransaction(sql, async (tx) => {
    const had = (await store.listDashboardGrants(tx, d.id)).some((g) => g.user_id === userId);
    await store.insertDashboardGrant(tx, { dashboardId: d.id, userId, grantedBy: v.userId });
    if (!had) await auditDashboardGrant(tx, v, 'dashboard.grant_added', d, { user_id: userId });
    return store.listDashboardGrants(tx, d.id);
  });
}

export async function revokeDashboard(sql: Tx, v: Viewer, id: string, userId: string): Promise<void> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  await inTransaction(sql, async (tx) => {
    if (!(await store.deleteDashboardGrant(tx, d.id, userId))) throw notFound('no grant for this user');
    await auditDashboardGrant(tx, v, 'dashboard.grant_removed', d, { user_id: userId });
  });
}

export async function listRoleGrants(sql: Tx, v: Viewer, id: string): Promise<DashboardRoleGrantRow[]> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  return store.listDashboardRoleGrants(sql, d.id);
}

/** Lets everyone holding `role` see a restricted dashboard; sharing twice changes nothing. */
export async function shareWithRole(
  sql: Tx,
  v: Viewer,
  id: string,
  role: RoleGrantBody['role'],
): Promise<DashboardRoleGrantRow[]> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  return inTransaction(sql, async (tx) => {
    if (await store.insertDashboardRoleGrant(tx, { dashboardId: d.id, role, grantedBy: v.userId }))
      await auditDashboardGrant(tx, v, 'dashboard.grant_added', d, { role });
    return store.listDashboardRoleGrants(tx, d.id);
  });
}

export async function unshareRole(sql: Tx, v: Viewer, id: string, role: string): Promise<void> {
  const d = await visibleDashboard(sql, v, id);
  requireEditor(d, v);
  await inTransaction(sql, async (tx) => {
    if (!(await store.deleteDashboardRoleGrant(tx, d.id, role))) throw notFound('no grant for this role');
    await auditDashboardGrant(tx, v, 'dashboard.grant_removed', d, { role });
  });
}

function auditDashboardGrant(
  tx: Tx,
  v: Viewer,
  event: 'dashboard.grant_added' | 'dashboard.grant_removed',
  d: DashboardRow,
  who: { user_id: string } | { role: string },
) {
  const name = 'role' in who ? `everyone with the ${who.role} role` : who.user_id;
  return recordEvent(tx, {
    orgId: v.orgId,
    actor: actorOfViewer(v),
    origin: 'user',
    event,
    subject: { dashboard_id: d.id, ...who },
    outcome: 'allowed',
    detail: `${name} ${event === 'dashboard.grant_added' ? 'may see' : 'may no longer see'} ${d.name}`,
  });
}

const snapshot = (d: DashboardRow) => ({
  name: d.name,
  restricted_access: d.restricted_access,
  panels: d.panels,
});

async function auditDashboard(
  tx: Tx,
  v: Viewer,
  event: 'dashboard.created' | 'dashboard.updated' | 'dashboard.deleted',
  before: DashboardRow | null,
  after: DashboardRow | null,
): Promise<void> {
  const change = changeOf(before && snapshot(before), after && snapshot(after));
  if (isEmptyChange(change)) return;
  const d = (after ?? before)!;
  await recordEvent(tx, {
    orgId: v.orgId,
    actor: actorOfViewer(v),
    origin: 'user',
    event,
    subject: { dashboard_id: d.id, ...change },
    outcome: 'allowed',
    detail:
      event === 'dashboard.updated'
        ? `${d.name}: ${Object.keys(change.after ?? {}).join(', ')}`
        : `${event === 'dashboard.created' ? 'created' : 'deleted'} ${d.name}`,
  });
}
