// Running a dashboard: a panel's query goes through the one governed pipeline as the person
// viewing it (origin `dashboard`), and a row action starts its workflow through the same
// startRun as POST /api/v1/workflows/:id/run (SPEC.md 2.3).
import type { QueryResult } from '../adapters/types.ts';
import { startRun } from '../automation/runs.ts';
import type { Deps } from '../core/deps.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { ExprError, type InputType, parseInputValue, renderSql } from '../expr/index.ts';
import { credentialTarget } from '../governance/access.ts';
import { encodeParams } from '../governance/params.ts';
import { type GovernanceDeps, resolveTarget, runGovernedQuery } from '../governance/query.ts';
import { listQueryRequests, runRequest } from '../governance/requests.ts';
import { principalCaller, type UserPrincipal } from '../identity/principal.ts';
import type { DashboardRow, Panel } from '../store/dashboards.ts';
import { findWorkflow } from '../store/workflows.ts';
import { actorOfViewer, type Viewer, visibleDashboard } from './manage.ts';
import { RunActionBody, RunPanelBody } from './schema.ts';

/** Rows a panel shows at most; the result says when it was cut. */
export const PANEL_MAX_ROWS = 1000;

export type PanelOutcome =
  | { status: 'executed'; result: QueryResult; requestId: string | null }
  /** Waiting for reviews as query request `requestId` (submitted now or earlier by the viewer). */
  | { status: 'pending_review'; requestId: string; reviewsRequired: number }
  /** The credential needs reviews and the viewer has not asked for them yet (nothing was run). */
  | { status: 'review_required'; reviewsRequired: number };

export interface PanelRun {
  dashboard: DashboardRow;
  panel: Panel;
  /**
   * 'view' never creates anything: a page load on a review-required credential answers
   * `review_required`. 'submit' turns the query into a query request (an explicit click or POST).
   */
  mode: 'view' | 'submit';
  inputs: Record<string, string>;
}

/** Finds a panel of a dashboard the viewer can see. */
export async function findPanel(
  deps: Pick<Deps, 'sql'>,
  v: Viewer,
  dashboardId: string,
  panelId: string,
): Promise<{ dashboard: DashboardRow; panel: Panel }> {
  const dashboard = await visibleDashboard(deps.sql, v, dashboardId);
  const panel = dashboard.panels.find((p) => p.id === panelId);
  if (!panel) throw notFound('no such panel');
  return { dashboard, panel };
}

/**
 * Runs a panel's query as the viewer: their access, their data-protection policy and the
 * credential's review rule all apply, because the governed pipeline does the work. Inputs are
 * bound parameters (renderSql), never SQL text.
 */
export async function runPanel(deps: GovernanceDeps, v: Viewer, run: PanelRun): Promise<PanelOutcome> {
  const { panel } = run;
  // The schema of POST …/panels/:panelId/run, checked here so the page's form answers the same.
  const given = parseInput(RunPanelBody, { inputs: run.inputs }).inputs;
  const missing = panel.inputs.filter((i) => given[i.key] === undefined);
  if (missing.length > 0)
    throw validationFailed(missing.map((i) => ({ path: `inputs.${i.key}`, message: 'a value is required' })));
  const target = await credentialTarget(deps.sql, v.orgId, panel.details.credential_id);
  if (!target) throw notFound('the credential of this panel no longer exists');
  const inputs = Object.fromEntries(panel.inputs.map((i) => [i.key, given[i.key]!]));
  let rendered: { text: string; params: Array<string | number | boolean | null> };
  try {
    rendered = renderSql(panel.details.query, { inputs, steps: {} }, target.adapter);
  } catch (err) {
    if (err instanceof ExprError) throw validationFailed([{ path: 'query', message: err.message }]);
    throw err;
  }
  const actor = actorOfViewer(v);
  const query = {
    orgId: v.orgId,
    actor,
    origin: 'dashboard' as const,
    databaseId: target.database_id,
    credentialId: panel.details.credential_id,
    statement: rendered.text,
    params: rendered.params,
    maxRows: PANEL_MAX_ROWS,
    // Whoever opens the dashboard runs the panel: it may only read (GovernedQuery.readOnly).
    readOnly: true,
  };
  // The review rule is looked up first only to avoid opening a request on a mere page view; an
  // actor who may not see the target falls through to the pipeline, which denies and audits.
  const cred = await resolveTarget(deps.sql, query).then(
    (t) => t.cred,
    () => null,
  );
  if (cred && cred.reviews_required > 0) {
    const open = await openRequest(deps, v, query);
    if (open?.status === 'approved') {
      const out = await runRequest(deps, { orgId: v.orgId, actor, origin: 'dashboard' }, open.id, null, {
        readOnly: true,
      });
      return { status: 'executed', result: out.outcome.result, requestId: open.id };
    }
    if (open) return { status: 'pending_review', requestId: open.id, reviewsRequired: open.reviews_required };
    if (run.mode === 'view') return { status: 'review_required', reviewsRequired: cred.reviews_required };
  }
  const outcome = await runGovernedQuery(deps, { ...query, onReviewRequired: 'submit' });
  if (outcome.status === 'pending_review')
    return {
      status: 'pending_review',
      requestId: outcome.requestId,
      reviewsRequired: outcome.reviewsRequired,
    };
  return { status: 'executed', result: outcome.result, requestId: outcome.requestId ?? null };
}

/**
 * The viewer's own open request for exactly this statement and these parameters, so viewing a
 * panel again shows the request already waiting instead of opening another one.
 */
async function openRequest(
  deps: GovernanceDeps,
  v: Viewer,
  q: { databaseId: string; credentialId: string; statement: string; params: unknown[] },
) {
  const params = JSON.stringify(encodeParams(q.params as Parameters<typeof encodeParams>[0]));
  for (const status of ['approved', 'pending'] as const) {
    const page = await listQueryRequests(
      deps,
      { orgId: v.orgId, actor: actorOfViewer(v), origin: 'dashboard' },
      {
        status,
        databaseId: q.databaseId,
        mine: true,
        limit: 200,
      },
    );
    const same = page.items.find(
      (r) =>
        r.origin === 'dashboard' &&
        r.credential_id === q.credentialId &&
        r.statement === q.statement &&
        JSON.stringify(r.params) === params,
    );
    if (same) return same;
  }
  return null;
}

/**
 * Starts the action's workflow with the clicked row's values mapped by `input_mappings`. The
 * row comes from the client, which grants nothing: the same person may start that workflow
 * with any inputs through the run endpoint.
 */
export async function runAction(
  deps: Pick<Deps, 'sql' | 'config' | 'temporal' | 'logger'>,
  principal: UserPrincipal,
  ref: { dashboardId: string; panelId: string; actionId: string },
  rawRow: Record<string, string | number | boolean | null>,
): Promise<{ runId: string; workflowId: string }> {
  // The schema of POST …/actions/:actionId/run, checked before any lookup, whichever door.
  const { row } = parseInput(RunActionBody, { row: rawRow });
  const { panel } = await findPanel(deps, principal, ref.dashboardId, ref.panelId);
  const action = panel.actions.find((a) => a.id === ref.actionId);
  if (!action) throw notFound('no such action');
  if (!action.workflow_id)
    throw validationFailed([{ path: 'workflow_id', message: 'this action has no workflow to run' }]);
  const wf = await findWorkflow(deps.sql, principal.orgId, action.workflow_id);
  if (!wf) throw notFound('the workflow of this action no longer exists');
  const inputs: Record<string, string | number | boolean> = {};
  const errors: Array<{ path: string; message: string }> = [];
  for (const m of action.input_mappings) {
    const def = wf.inputs.find((i) => i.key === m.workflow_input_key);
    const cell = row[m.column];
    if (!def)
      errors.push({ path: `input_mappings.${m.workflow_input_key}`, message: 'no such workflow input' });
    else if (!(m.column in row))
      errors.push({ path: `row.${m.column}`, message: 'the row has no such column' });
    else if (cell === null || cell === undefined)
      errors.push({ path: `row.${m.column}`, message: `is empty; input ${def.key} needs a value` });
    else {
      try {
        inputs[def.key] = cellToInput(def.type, cell, def.key);
      } catch (err) {
        errors.push({ path: `row.${m.column}`, message: (err as Error).message });
      }
    }
  }
  if (errors.length > 0) throw validationFailed(errors);
  const runId = await startRun(
    deps,
    principalCaller(principal),
    wf.id,
    inputs,
    null,
    'json',
    ref.dashboardId,
  );
  return { runId, workflowId: wf.id };
}

/** A result cell as a typed workflow input: cells of the input's type pass, text is read. */
function cellToInput(
  type: InputType,
  cell: string | number | boolean,
  key: string,
): string | number | boolean {
  if (type === 'string') return typeof cell === 'string' ? cell : String(cell);
  const asJson = typeof cell === 'string' ? null : cell;
  if (asJson !== null) return parseInputValue(type, asJson, { fromText: false, name: key });
  return parseInputValue(type, cell, { fromText: true, name: key });
}
