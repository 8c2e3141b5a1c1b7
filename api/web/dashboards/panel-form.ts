// The panel editor's form fields, read into a panel body of the REST shape (dashboards/schema.ts
// PanelBody): the domain checks it with the same schema as PUT /v1/dashboards/:id. Rows are
// numbered (in.0.key, act.0.map.customer_id) because a form posts each name once.
import type { PanelViewKind } from '../../../store/dashboards.ts';

/** A panel as the editor shows it: a stored panel, or what the person typed (maybe invalid). */
export interface PanelDraft {
  title: string;
  credential_id: string;
  query: string;
  view: PanelViewKind;
  inputs: Array<{ key: string; description: string }>;
  actions: Array<{
    id: string | null;
    label: string;
    workflow_id: string;
    input_mappings: Array<{ workflow_input_key: string; column: string }>;
  }>;
}

export const EMPTY_DRAFT: PanelDraft = {
  title: '',
  credential_id: '',
  query: '',
  view: 'table',
  inputs: [],
  actions: [],
};

const VIEWS: readonly PanelViewKind[] = ['table', 'line', 'bar'];

/** Rows the form numbers: reads `prefix.N.*` for N = 0, 1, … while any field of row N is present. */
function rows(form: Record<string, string>, prefix: string): number[] {
  const seen = new Set<number>();
  for (const k of Object.keys(form)) {
    const m = new RegExp(`^${prefix}\\.(\\d{1,3})\\.`).exec(k);
    if (m) seen.add(Number(m[1]));
  }
  return [...seen].sort((a, b) => a - b);
}

export function draftFromForm(form: Record<string, string>): PanelDraft {
  const view = VIEWS.find((x) => x === form.view) ?? 'table';
  const inputs = rows(form, 'in')
    .map((i) => ({ key: (form[`in.${i}.key`] ?? '').trim(), description: form[`in.${i}.description`] ?? '' }))
    .filter((x) => x.key !== '');
  const actions = rows(form, 'act')
    .filter((i) => form[`act.${i}.remove`] !== 'yes')
    .map((i) => {
      const prefix = `act.${i}.map.`;
      const input_mappings = Object.entries(form)
        .filter(([k, col]) => k.startsWith(prefix) && col.trim() !== '')
        .map(([k, col]) => ({ workflow_input_key: k.slice(prefix.length), column: col.trim() }));
      return {
        id: form[`act.${i}.id`] || null,
        label: (form[`act.${i}.label`] ?? '').trim(),
        workflow_id: form[`act.${i}.workflow`] ?? '',
        input_mappings,
      };
    })
    .filter((a) => a.label !== '' || a.workflow_id !== '');
  return {
    title: (form.title ?? '').trim(),
    credential_id: form.credential ?? '',
    query: form.query ?? '',
    view,
    inputs,
    actions,
  };
}

/** Sample values for the preview, by input key (`in.N.sample`). */
export function samplesFromForm(form: Record<string, string>, draft: PanelDraft): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of rows(form, 'in')) {
    const key = (form[`in.${i}.key`] ?? '').trim();
    if (key && draft.inputs.some((x) => x.key === key)) out[key] = form[`in.${i}.sample`] ?? '';
  }
  return out;
}

/** The request body of a draft, unchecked: the domain parses it with the REST schema. */
export function bodyOfDraft(d: PanelDraft): Record<string, unknown> {
  return {
    title: d.title,
    inputs: d.inputs,
    actions: d.actions.map((a) => ({
      id: a.id,
      label: a.label || null,
      workflow_id: a.workflow_id || null,
      input_mappings: a.input_mappings,
    })),
    details: { __type__: 'query', query: d.query, credential_id: d.credential_id, view: d.view },
  };
}

export function draftOfPanel(p: {
  title: string;
  inputs: PanelDraft['inputs'];
  actions: Array<{
    id: string;
    label: string | null;
    workflow_id: string | null;
    input_mappings: PanelDraft['actions'][number]['input_mappings'];
  }>;
  details: { query: string; credential_id: string; view?: PanelViewKind };
}): PanelDraft {
  return {
    title: p.title,
    credential_id: p.details.credential_id,
    query: p.details.query,
    view: p.details.view ?? 'table',
    inputs: p.inputs,
    actions: p.actions.map((a) => ({
      id: a.id,
      label: a.label ?? '',
      workflow_id: a.workflow_id ?? '',
      input_mappings: a.input_mappings,
    })),
  };
}
