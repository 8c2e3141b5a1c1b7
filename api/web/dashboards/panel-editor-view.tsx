// The panel editor of the dashboard builder: one panel's fields, inputs, row actions with their
// input mapping, and the preview of what it shows. A plain form: Preview and Save both post it.
import type { FieldError } from '../../../core/errors.ts';
import type { DashboardRow, Panel } from '../../../store/dashboards.ts';
import { Csrf } from '../kit/components.tsx';
import type { BuilderChoices, PanelEditor } from './builder-view.tsx';
import type { PanelDraft } from './panel-form.ts';
import { PanelBody } from './view.tsx';

export const VIEW_LABEL = { table: 'Table', line: 'Line chart', bar: 'Bar chart' } as const;

/** The panel the preview ran: the draft as a stored panel would be. */
export function previewPanel(d: PanelDraft): Panel {
  return {
    id: 'preview',
    title: d.title,
    inputs: d.inputs,
    actions: [],
    details: { __type__: 'query', query: d.query, credential_id: d.credential_id, view: d.view },
  };
}

export function PanelEditorForm(props: {
  dashboard: DashboardRow;
  csrf: string;
  choices: BuilderChoices;
  editor: PanelEditor;
  base: string;
}) {
  const { draft, errors, samples } = props.editor;
  const err = (path: string) => errors.filter((e) => e.path === path || e.path.startsWith(`${path}.`));
  const inputs = [...draft.inputs, { key: '', description: '' }];
  const actions = [...draft.actions, { id: null, label: '', workflow_id: '', input_mappings: [] }];
  const columns = props.editor.preview?.status === 'executed' ? props.editor.preview.result.columns : [];
  return (
    <form method="post" action={`${props.base}/panels`} class="card wide" id="panel-editor">
      <h2>{props.editor.panelId ? `Edit panel ${draft.title || ''}` : 'New panel'}</h2>
      <Csrf token={props.csrf} />
      <input type="hidden" name="panel" value={props.editor.panelId ?? ''} />
      {errors.length > 0 ? (
        <div class="warning error" role="alert" tabindex={-1} id="editor-errors">
          <p>The panel was not saved:</p>
          <ul>
            {errors.map((e) => (
              <li>{`${fieldName(e.path)}: ${e.message}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div class="row">
        <Field id="pe-title" label="Title" errors={err('title')}>
          <input
            id="pe-title"
            {...aria('pe-title', err('title'))}
            name="title"
            maxlength={200}
            value={draft.title}
            autocomplete="off"
          />
        </Field>
        <Field id="pe-view" label="Show the result as" errors={err('details.view')}>
          <select id="pe-view" {...aria('pe-view', err('details.view'))} name="view">
            {(['table', 'line', 'bar'] as const).map((k) => (
              <option value={k} selected={draft.view === k}>
                {VIEW_LABEL[k]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Field id="pe-credential" label="Database and credential" errors={err('details.credential_id')}>
        <select
          id="pe-credential"
          {...aria('pe-credential', err('details.credential_id'))}
          name="credential"
          required
        >
          <option value="">Choose…</option>
          {props.choices.credentials.map((c) => (
            <option value={c.id} selected={draft.credential_id === c.id}>
              {c.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        id="pe-query"
        label="Query"
        errors={err('details.query')}
        hint="A read (SELECT). Write ${name} where an input's value goes; it is sent as a parameter, never as SQL text. Charts draw the first column along the bottom and every other numeric column as a series."
      >
        <textarea
          id="pe-query"
          name="query"
          required
          spellcheck={false}
          {...aria('pe-query', err('details.query'), 'pe-query-hint')}
        >
          {draft.query}
        </textarea>
      </Field>
      <fieldset>
        <legend>Inputs (what a viewer types before the query runs)</legend>
        {inputs.map((input, i) => (
          <div class="row">
            <Field id={`pe-in-${i}-key`} label={`Input ${i + 1} name`} errors={err(`inputs.${i}`)}>
              <input
                id={`pe-in-${i}-key`}
                {...aria(`pe-in-${i}-key`, err(`inputs.${i}`))}
                name={`in.${i}.key`}
                value={input.key}
                autocomplete="off"
              />
            </Field>
            <Field id={`pe-in-${i}-description`} label="Label shown to viewers" errors={[]}>
              <input
                id={`pe-in-${i}-description`}
                name={`in.${i}.description`}
                value={input.description}
                autocomplete="off"
              />
            </Field>
            <Field id={`pe-in-${i}-sample`} label="Value for the preview" errors={[]}>
              <input
                id={`pe-in-${i}-sample`}
                name={`in.${i}.sample`}
                value={samples[input.key] ?? ''}
                autocomplete="off"
              />
            </Field>
          </div>
        ))}
      </fieldset>
      <fieldset>
        <legend>Row actions (a button on each row that starts a workflow)</legend>
        {actions.map((a, i) => {
          const wf = props.choices.workflows.find((w) => w.id === a.workflow_id);
          return (
            <div class="action-editor">
              <input type="hidden" name={`act.${i}.id`} value={a.id ?? ''} />
              <div class="row">
                <Field
                  id={`pe-act-${i}-label`}
                  label={`Action ${i + 1} button label`}
                  errors={err(`actions.${i}.label`)}
                >
                  <input
                    id={`pe-act-${i}-label`}
                    {...aria(`pe-act-${i}-label`, err(`actions.${i}.label`))}
                    name={`act.${i}.label`}
                    value={a.label}
                    autocomplete="off"
                  />
                </Field>
                <Field
                  id={`pe-act-${i}-workflow`}
                  label="Workflow it starts"
                  errors={err(`actions.${i}.workflow_id`)}
                >
                  <select
                    id={`pe-act-${i}-workflow`}
                    {...aria(`pe-act-${i}-workflow`, err(`actions.${i}.workflow_id`))}
                    name={`act.${i}.workflow`}
                  >
                    <option value="">None</option>
                    {props.choices.workflows.map((w) => (
                      <option value={w.id} selected={a.workflow_id === w.id}>
                        {w.name}
                      </option>
                    ))}
                  </select>
                </Field>
              </div>
              {wf ? (
                <MappingRows
                  index={i}
                  workflow={wf}
                  action={a}
                  columns={columns}
                  errors={err(`actions.${i}.input_mappings`)}
                />
              ) : (
                <p class="muted small">Choose a workflow and press Preview to map its inputs to columns.</p>
              )}
              {a.id ? (
                <label class="check">
                  <input type="checkbox" name={`act.${i}.remove`} value="yes" /> Remove this action
                </label>
              ) : null}
            </div>
          );
        })}
      </fieldset>
      <div class="actions">
        <button type="submit" formaction={`${props.base}/preview#preview`} class="quiet">
          Preview
        </button>
        <button type="submit">Save panel</button>
        {props.editor.panelId ? (
          <a class="button quiet" href={`${props.base}#panel-editor`}>
            Cancel
          </a>
        ) : null}
      </div>
      <section id="preview" aria-live="polite" aria-labelledby="preview-heading">
        <h3 id="preview-heading">Preview</h3>
        {props.editor.preview ? (
          <div {...(props.editor.previewed ? { id: 'outcome' } : {})}>
            <PanelBody
              panel={previewPanel(draft)}
              back=""
              state={props.editor.preview}
              base=""
              values={samples}
              csrf={props.csrf}
              actions={[]}
              workflowNames={{}}
            />
          </div>
        ) : (
          <p class="muted">Press Preview to run the query as you, with the values above; nothing is saved.</p>
        )}
      </section>
    </form>
  );
}

function MappingRows(props: {
  index: number;
  workflow: BuilderChoices['workflows'][number];
  action: PanelDraft['actions'][number];
  columns: string[];
  errors: FieldError[];
}) {
  const { index: i, workflow, action } = props;
  return (
    <fieldset class="mapping">
      <legend>Fill the inputs of {workflow.name} from the row</legend>
      {props.errors.map((e) => (
        <p class="error">{e.message}</p>
      ))}
      {workflow.inputs.length === 0 ? <p class="muted small">This workflow takes no inputs.</p> : null}
      {workflow.inputs.map((input) => {
        const id = `pe-act-${i}-map-${input.key}`;
        const mapped = action.input_mappings.find((m) => m.workflow_input_key === input.key)?.column;
        // Unmapped so far: the column of the same name, when the query returns one.
        const chosen = mapped ?? (props.columns.includes(input.key) ? input.key : '');
        const options = [...new Set([...props.columns, ...(chosen ? [chosen] : [])])];
        return (
          <div>
            <label for={id}>
              {input.key} <span class="muted">({input.type})</span> from column
            </label>
            {options.length > 0 ? (
              <select id={id} name={`act.${i}.map.${input.key}`}>
                <option value="">Not filled</option>
                {options.map((col) => (
                  <option value={col} selected={col === chosen}>
                    {col}
                  </option>
                ))}
              </select>
            ) : (
              <input id={id} name={`act.${i}.map.${input.key}`} value={chosen} autocomplete="off" />
            )}
          </div>
        );
      })}
    </fieldset>
  );
}

/** A control's accessible error (WCAG 3.3.1): marked invalid and described by its message (and hint). */
function aria(id: string, errors: FieldError[], hint?: string) {
  const described = [hint, errors.length > 0 ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return {
    ...(errors.length > 0 ? { 'aria-invalid': 'true' } : {}),
    ...(described ? { 'aria-describedby': described } : {}),
  };
}

function Field(props: { id: string; label: string; errors: FieldError[]; hint?: string; children: unknown }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <p class="muted small" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.errors.length > 0 ? (
        <p class="error" id={`${props.id}-error`}>
          {props.errors.map((e) => e.message).join('; ')}
        </p>
      ) : null}
    </div>
  );
}

/** A field path of the panel in words a person uses. */
function fieldName(path: string): string {
  const m = /^(inputs|actions)\.(\d+)\.?(.*)$/.exec(path);
  if (m) {
    const what = m[1] === 'inputs' ? 'Input' : 'Action';
    const rest = m[3] ? ` ${fieldName(m[3])}` : '';
    return `${what} ${Number(m[2]) + 1}${rest}`;
  }
  const words: Record<string, string> = {
    title: 'Title',
    'details.query': 'Query',
    'details.credential_id': 'Database and credential',
    'details.view': 'Show the result as',
    key: 'name',
    label: 'button label',
    workflow_id: 'workflow',
    input_mappings: 'inputs',
  };
  return words[path] ?? (path.replace(/^input_mappings\.\d+\./, 'input ') || 'Panel');
}
