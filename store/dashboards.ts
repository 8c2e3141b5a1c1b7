import type { Tx } from './db.ts';

/** SPEC.md 2.3 panel input: a value the viewer types, bound as a parameter of the panel query. */
export interface PanelInput {
  key: string;
  description: string;
}

/** SPEC.md 2.3 panel action: a button on each result row that starts a workflow. */
export interface PanelAction {
  id: string;
  label: string | null;
  workflow_id: string | null;
  input_mappings: Array<{ workflow_input_key: string; column: string }>;
}

/** SPEC.md 2.3 panel; only query panels exist. */
export interface Panel {
  id: string;
  title: string;
  inputs: PanelInput[];
  actions: PanelAction[];
  /** `view`: how the page draws a result (a table when absent); charts fall back to a table. */
  details: { __type__: 'query'; query: string; credential_id: string; view?: PanelViewKind };
}

export type PanelViewKind = 'table' | 'line' | 'bar';

/** One stored dashboard (store/migrations/0008_dashboards.sql). */
export interface DashboardRow {
  id: string;
  org_id: string;
  name: string;
  restricted_access: boolean;
  panels: Panel[];
  created_by: string | null;
  archived_at: Date | null;
  inserted_at: Date;
  updated_at: Date;
}

export type DashboardFields = Pick<DashboardRow, 'name' | 'restricted_access' | 'panels'>;

export async function insertDashboard(
  sql: Tx,
  d: DashboardFields & { id: string; orgId: string; createdBy: string | null },
): Promise<DashboardRow> {
  const [row] = await sql<DashboardRow[]>`
    insert into dashboards (id, org_id, name, restricted_access, panels, created_by)
    values (${d.id}, ${d.orgId}, ${d.name}, ${d.restricted_access}, ${sql.json(json(d.panels))}, ${d.createdBy})
    returning *`;
  return row!;
}

export async function updateDashboard(sql: Tx, id: string, f: DashboardFields): Promise<DashboardRow> {
  const [row] = await sql<DashboardRow[]>`
    update dashboards
    set name = ${f.name}, restricted_access = ${f.restricted_access}, panels = ${sql.json(json(f.panels))},
        updated_at = now()
    where id = ${id}
    returning *`;
  return row!;
}

/** Sets or clears archived_at; an archived dashboard keeps its panels and can be restored. */
export async function setArchived(sql: Tx, id: string, archived: boolean): Promise<DashboardRow> {
  const [row] = await sql<DashboardRow[]>`
    update dashboards
    set archived_at = ${archived ? sql`coalesce(archived_at, now())` : null}, updated_at = now()
    where id = ${id}
    returning *`;
  return row!;
}

/** Removes the dashboard for good (SPEC.md 3: permanent); its grants go with it. */
export async function deleteDashboard(sql: Tx, id: string): Promise<void> {
  await sql`delete from dashboards where id = ${id}`;
}

/** The dashboard in the organization; `forUpdate` locks it for a read-modify-write. */
export async function findDashboard(
  sql: Tx,
  orgId: string,
  id: string,
  forUpdate = false,
): Promise<DashboardRow | null> {
  const [row] = await sql<DashboardRow[]>`
    select * from dashboards where id = ${id} and org_id = ${orgId} ${forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

/**
 * In id order after `after`. With `visibleTo` (a user who is not a super admin) restricted
 * dashboards appear only when that user created them or holds a grant.
 */
export async function listDashboards(
  sql: Tx,
  orgId: string,
  opts: { visibleTo: string | null; includeArchived: boolean; after?: string | undefined; limit: number },
): Promise<DashboardRow[]> {
  return sql<DashboardRow[]>`
    select d.* from dashboards d
    where d.org_id = ${orgId}
      ${opts.includeArchived ? sql`` : sql`and d.archived_at is null`}
      ${opts.after ? sql`and d.id > ${opts.after}` : sql``}
      ${
        opts.visibleTo
          ? sql`and (not d.restricted_access or d.created_by = ${opts.visibleTo} or exists (
              select 1 from dashboard_grants g where g.dashboard_id = d.id and g.user_id = ${opts.visibleTo})
              or exists (select 1 from dashboard_role_grants r join users u on u.role = r.role
                where r.dashboard_id = d.id and u.id = ${opts.visibleTo}))`
          : sql``
      }
    order by d.id
    limit ${opts.limit}`;
}

export interface DashboardGrantRow {
  dashboard_id: string;
  user_id: string;
  granted_by: string | null;
  created_at: Date;
  email: string;
}

export async function hasDashboardGrant(sql: Tx, dashboardId: string, userId: string): Promise<boolean> {
  const rows = await sql`
    select 1 from dashboard_grants where dashboard_id = ${dashboardId} and user_id = ${userId}`;
  return rows.length > 0;
}

/** Grants access; granting twice changes nothing. */
export async function insertDashboardGrant(
  sql: Tx,
  g: { dashboardId: string; userId: string; grantedBy: string | null },
): Promise<void> {
  await sql`
    insert into dashboard_grants (dashboard_id, user_id, granted_by)
    values (${g.dashboardId}, ${g.userId}, ${g.grantedBy})
    on conflict (dashboard_id, user_id) do nothing`;
}

export async function listDashboardGrants(sql: Tx, dashboardId: string): Promise<DashboardGrantRow[]> {
  return sql<DashboardGrantRow[]>`
    select g.*, u.email from dashboard_grants g join users u on u.id = g.user_id
    where g.dashboard_id = ${dashboardId} order by g.created_at, g.user_id`;
}

/** Removes a grant; false when there was none. */
export async function deleteDashboardGrant(sql: Tx, dashboardId: string, userId: string): Promise<boolean> {
  const rows = await sql`
    delete from dashboard_grants where dashboard_id = ${dashboardId} and user_id = ${userId} returning 1`;
  return rows.length === 1;
}

// postgres.js types sql.json's argument as its own JSON type; panels are plain JSON data.
type JsonValue = Parameters<Tx['json']>[0];
function json(value: unknown): JsonValue {
  return value as JsonValue;
}

/** Roles a restricted dashboard is shared with (store/migrations/0032_dashboard_role_grants.sql). */
export interface DashboardRoleGrantRow {
  dashboard_id: string;
  role: 'admin' | 'member';
  granted_by: string | null;
  created_at: Date;
}

export async function hasDashboardRoleGrant(sql: Tx, dashboardId: string, role: string): Promise<boolean> {
  const rows = await sql`
    select 1 from dashboard_role_grants where dashboard_id = ${dashboardId} and role = ${role}`;
  return rows.length > 0;
}

export async function listDashboardRoleGrants(
  sql: Tx,
  dashboardId: string,
): Promise<DashboardRoleGrantRow[]> {
  return sql<DashboardRoleGrantRow[]>`
    select * from dashboard_role_grants where dashboard_id = ${dashboardId} order by role`;
}

/** Shares with a role; true when the grant is new (sharing twice changes nothing). */
export async function insertDashboardRoleGrant(
  sql: Tx,
  g: { dashboardId: string; role: string; grantedBy: string | null },
): Promise<boolean> {
  const rows = await sql`
    insert into dashboard_role_grants (dashboard_id, role, granted_by)
    values (${g.dashboardId}, ${g.role}, ${g.grantedBy})
    on conflict (dashboard_id, role) do nothing returning 1`;
  return rows.length === 1;
}

export async function deleteDashboardRoleGrant(sql: Tx, dashboardId: string, role: string): Promise<boolean> {
  const rows = await sql`
    delete from dashboard_role_grants where dashboard_id = ${dashboardId} and role = ${role} returning 1`;
  return rows.length === 1;
}
