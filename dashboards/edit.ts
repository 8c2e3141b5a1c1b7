// Editing one panel of a dashboard at a time (the web builder): each change rebuilds the whole
// panel list and goes through updateDashboard with the REST request schema (UpdateDashboard), so
// a form is checked by the same rules as PUT /v1/dashboards/:id and is audited the same way.
import { notFound } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import type { DashboardRow, Panel } from '../store/dashboards.ts';
import type { Tx } from '../store/db.ts';
import { updateDashboard, type Viewer, visibleDashboard } from './manage.ts';
import { UpdateDashboard } from './schema.ts';

/** A stored panel as a request body sends it back (its ids are kept by normalizePanels). */
const asBody = (p: Panel): unknown => p;

async function replacePanels(sql: Tx, v: Viewer, d: DashboardRow, panels: unknown[]): Promise<DashboardRow> {
  return updateDashboard(sql, v, d.id, parseInput(UpdateDashboard, { panels }));
}

/**
 * Saves `raw` (a panel body, unchecked) in place of panel `panelId`, or as a new last panel when
 * `panelId` is null. A 422 names fields as `panels.<index>.…`; `index` says which one is this panel.
 */
export async function savePanel(
  sql: Tx,
  v: Viewer,
  dashboardId: string,
  panelId: string | null,
  raw: Record<string, unknown>,
): Promise<{ dashboard: DashboardRow; panel: Panel }> {
  const d = await visibleDashboard(sql, v, dashboardId);
  const bodies = d.panels.map(asBody);
  const index = panelId === null ? bodies.length : d.panels.findIndex((p) => p.id === panelId);
  if (index < 0) throw notFound('no such panel');
  bodies[index] = { ...raw, id: panelId };
  const updated = await replacePanels(sql, v, d, bodies);
  return { dashboard: updated, panel: updated.panels[index]! };
}

/** The index a new or edited panel will have: how a 422's `panels.<index>` is read back. */
export function panelIndex(d: DashboardRow, panelId: string | null): number {
  return panelId === null ? d.panels.length : d.panels.findIndex((p) => p.id === panelId);
}

/** Moves a panel one place up (-1) or down (+1); at either end nothing changes. */
export async function movePanel(
  sql: Tx,
  v: Viewer,
  dashboardId: string,
  panelId: string,
  by: -1 | 1,
): Promise<DashboardRow> {
  const d = await visibleDashboard(sql, v, dashboardId);
  const from = d.panels.findIndex((p) => p.id === panelId);
  if (from < 0) throw notFound('no such panel');
  const to = from + by;
  if (to < 0 || to >= d.panels.length) return d;
  const bodies = d.panels.map(asBody);
  [bodies[from], bodies[to]] = [bodies[to], bodies[from]];
  return replacePanels(sql, v, d, bodies);
}

export async function removePanel(
  sql: Tx,
  v: Viewer,
  dashboardId: string,
  panelId: string,
): Promise<DashboardRow> {
  const d = await visibleDashboard(sql, v, dashboardId);
  if (!d.panels.some((p) => p.id === panelId)) throw notFound('no such panel');
  return replacePanels(
    sql,
    v,
    d,
    d.panels.filter((p) => p.id !== panelId),
  );
}
