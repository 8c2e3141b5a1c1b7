// Checking panels when a dashboard is saved (SPEC.md 2.3): every problem is collected and answered
// in one 422 naming its field, so an editor fixes a dashboard in one round trip.
import type { AdapterName } from '../adapters/types.ts';
import type { FieldError } from '../core/errors.ts';
import { validationFailed } from '../core/errors.ts';
import { collectReferences, ExprError, renderSql } from '../expr/index.ts';
import { credentialTarget, resolveTarget } from '../governance/access.ts';
import type { QueryActor } from '../governance/query.ts';
import { classifyStatement } from '../sql/classify.ts';
import type { Panel, PanelAction } from '../store/dashboards.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { findWorkflow } from '../store/workflows.ts';
import { panelColumns } from './columns.ts';
import type { PanelBody } from './schema.ts';

/**
 * Turns the panels of a request into stored panels. Ids the dashboard already has are kept (a
 * PUT sends back what GET returned); any other id is replaced by a new one, so a client can
 * never choose or borrow ids (SPEC.md 4.3: panel and action ids are generated).
 */
export async function normalizePanels(
  sql: Tx,
  orgId: string,
  author: QueryActor,
  bodies: PanelBody[],
  existing: Panel[],
): Promise<Panel[]> {
  const errors: FieldError[] = [];
  const panelIds = new Set(existing.map((p) => p.id));
  const actionIds = new Set(existing.flatMap((p) => p.actions.map((a) => a.id)));
  const out: Panel[] = [];
  for (const [i, body] of bodies.entries()) {
    const at = `panels.${i}`;
    const keys = body.inputs.map((x) => x.key);
    keys.forEach((k, j) => {
      if (keys.indexOf(k) !== j)
        errors.push({ path: `${at}.inputs.${j}.key`, message: `duplicate input ${k}` });
    });
    const adapter = await panelTarget(sql, orgId, author, body.details.credential_id);
    if (!adapter) {
      errors.push({ path: `${at}.details.credential_id`, message: 'no such credential' });
      continue;
    }
    const statement = checkQuery(body.details.query, keys, adapter, `${at}.details.query`, errors);
    // Whoever opens the dashboard runs its panels with their own access: a panel may only read
    // (the pipeline refuses a write again at view time, and runs the read in read-only mode).
    if (statement && (await classifyStatement(adapter, statement)) === 'write')
      errors.push({
        path: `${at}.details.query`,
        message:
          'a panel query may only read (SELECT, SHOW, EXPLAIN); this one writes or could not be parsed',
      });
    const columns = statement ? await panelColumns(adapter, statement) : { names: [], open: true };
    const actions: PanelAction[] = [];
    for (const [j, a] of body.actions.entries()) {
      await checkAction(sql, orgId, a, columns, `${at}.actions.${j}`, errors);
      actions.push({
        id: a.id && actionIds.has(a.id) ? a.id : newId('act'),
        label: a.label === null || a.label.trim() === '' ? null : a.label,
        workflow_id: a.workflow_id === null || a.workflow_id === '' ? null : a.workflow_id,
        input_mappings: a.input_mappings,
      });
    }
    out.push({
      id: body.id && panelIds.has(body.id) ? body.id : newId('pl'),
      title: body.title,
      inputs: body.inputs,
      actions,
      details: body.details,
    });
  }
  if (errors.length > 0) throw validationFailed(errors);
  return out;
}

/**
 * The adapter of the panel's credential, if the author can see its database: a restricted
 * database the author has no grant on answers like a missing one (no existence leak).
 */
async function panelTarget(
  sql: Tx,
  orgId: string,
  author: QueryActor,
  credentialId: string,
): Promise<AdapterName | null> {
  const target = await credentialTarget(sql, orgId, credentialId);
  if (!target) return null;
  try {
    await resolveTarget(sql, { orgId, actor: author, databaseId: target.database_id, credentialId });
    return target.adapter;
  } catch {
    return null;
  }
}

/** The query renders (all references are declared inputs); returns it with placeholders. */
function checkQuery(
  query: string,
  inputKeys: string[],
  adapter: AdapterName,
  path: string,
  errors: FieldError[],
): string | null {
  try {
    const refs = collectReferences(query, 'template');
    if (refs.steps.length > 0) {
      errors.push({ path, message: 'a panel query may use only its inputs, not step outputs' });
      return null;
    }
    const missing = refs.inputs.filter((name) => !inputKeys.includes(name));
    if (missing.length > 0) {
      errors.push({ path, message: `the query uses undeclared input(s): ${missing.join(', ')}` });
      return null;
    }
    const inputs = Object.fromEntries(inputKeys.map((k) => [k, '']));
    return renderSql(query, { inputs, steps: {} }, adapter).text;
  } catch (err) {
    if (err instanceof ExprError) {
      errors.push({ path, message: err.message });
      return null;
    }
    throw err;
  }
}

async function checkAction(
  sql: Tx,
  orgId: string,
  a: PanelBody['actions'][number],
  columns: { names: string[]; open: boolean },
  path: string,
  errors: FieldError[],
): Promise<void> {
  a.input_mappings.forEach((m, k) => {
    // SPEC.md 2.3: a mapping names a result column; one the query cannot return is refused now.
    if (!columns.open && !columns.names.includes(m.column)) {
      errors.push({
        path: `${path}.input_mappings.${k}.column`,
        message: `the panel query returns no column ${m.column} (it returns ${columns.names.join(', ') || 'none'})`,
      });
    }
  });
  if (!a.workflow_id) {
    if (a.input_mappings.length > 0)
      errors.push({ path: `${path}.workflow_id`, message: 'input mappings need a workflow_id' });
    return;
  }
  const wf = await findWorkflow(sql, orgId, a.workflow_id);
  if (!wf) {
    errors.push({ path: `${path}.workflow_id`, message: 'no such workflow' });
    return;
  }
  const keys = wf.inputs.map((x) => x.key);
  a.input_mappings.forEach((m, k) => {
    if (!keys.includes(m.workflow_input_key)) {
      errors.push({
        path: `${path}.input_mappings.${k}.workflow_input_key`,
        message: `workflow ${wf.name} has no input ${m.workflow_input_key}`,
      });
    }
  });
}
