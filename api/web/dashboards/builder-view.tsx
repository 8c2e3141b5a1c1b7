// The dashboard builder: settings, the panel list (reorder, delete), one panel editor with its
// preview, sharing, and deleting the dashboard. Plain forms: everything works without scripts.
import type { FieldError } from '../../../core/errors.ts';
import type { DashboardRow, Panel } from '../../../store/dashboards.ts';
import { Csrf, Flash } from '../kit/components.tsx';
import type { PanelDraft } from './panel-form.ts';
import { ChartScript, chartOfState, PanelBody, type PanelState } from './view.tsx';

export interface BuilderChoices {
  credentials: Array<{ id: string; label: string }>;
  workflows: Array<{ id: string; name: string; inputs: Array<{ key: string; type: string }> }>;
  people: Array<{ id: string; email: string }>;
}

export interface PanelEditor {
  panelId: string | null;
  draft: PanelDraft;
  samples: Record<string, string>;
  /** Paths relative to the panel (`details.query`, `actions.0.workflow_id`). */
  errors: FieldError[];
  preview: PanelState | null;
  /** After a Preview press: the preview takes the focus (kit/assets/app.js focuses #outcome). */
  previewed?: boolean;
}

const VIEW_LABEL = { table: 'Table', line: 'Line chart', bar: 'Bar chart' } as const;

export function NewDashboardPage(props: { csrf: string; name: string; restricted: boolean; error?: string }) {
  return (
    <section>
      <p class="muted">
        <a href="/dashboards">Dashboards</a> /
      </p>
      <h1>New dashboard</h1>
      <Flash error={props.error} />
      <form method="post" action="/dashboards/new" class="card">
        <Csrf token={props.csrf} />
        <SettingsFields name={props.name} restricted={props.restricted} />
        <button type="submit">Create and add panels</button>
      </form>
    </section>
  );
}

function SettingsFields(props: { name: string; restricted: boolean }) {
  return (
    <>
      <label for="dash-name">Name</label>
      <input id="dash-name" name="name" required maxlength={200} value={props.name} autocomplete="off" />
      <fieldset>
        <legend>Who may see it</legend>
        <label class="check">
          <input type="radio" name="restricted_access" value="false" checked={!props.restricted} />
          Everyone in the organization
        </label>
        <label class="check">
          <input type="radio" name="restricted_access" value="true" checked={props.restricted} />
          Only the people and roles it is shared with (super admins see every dashboard)
        </label>
      </fieldset>
    </>
  );
}

export function BuilderPage(props: {
  dashboard: DashboardRow;
  csrf: string;
  choices: BuilderChoices;
  roles: string[];
  grants: Array<{ user_id: string; email: string }>;
  editor: PanelEditor;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const d = props.dashboard;
  const base = `/dashboards/${d.id}/edit`;
  const chart =
    props.editor.preview !== null && chartOfState(previewPanel(props.editor.draft), props.editor.preview);
  return (
    <section class="builder">
      <p class="muted">
        <a href="/dashboards">Dashboards</a> / <a href={`/dashboards/${d.id}`}>{d.name}</a> /
      </p>
      <h1>Edit {d.name}</h1>
      <Flash notice={props.notice} error={props.error} />
      <div class="builder-grid">
        <div>
          <h2 id="panels-heading">Panels</h2>
          <PanelList dashboard={d} csrf={props.csrf} editing={props.editor.panelId} />
          <PanelEditorForm {...props} base={base} />
        </div>
        <div>
          <form method="post" action={`${base}/settings`} class="card">
            <h2>Settings</h2>
            <Csrf token={props.csrf} />
            <SettingsFields name={d.name} restricted={d.restricted_access} />
            <button type="submit">Save settings</button>
          </form>
          <Sharing {...props} base={base} />
          <form method="post" action={`/dashboards/${d.id}/delete`} class="card">
            <h2>Delete</h2>
            <Csrf token={props.csrf} />
            <p class="muted">Deleting is permanent: the panels and the sharing go with it.</p>
            <button type="submit" class="bad">
              Delete this dashboard
            </button>
          </form>
        </div>
      </div>
      {chart ? <ChartScript /> : null}
    </section>
  );
}

function PanelList(props: { dashboard: DashboardRow; csrf: string; editing: string | null }) {
  const d = props.dashboard;
  if (d.panels.length === 0) return <p class="muted">No panel yet: the form below adds the first one.</p>;
  return (
    <ol class="panel-list card" aria-labelledby="panels-heading">
      {d.panels.map((p, i) => {
        const name = p.title || 'Untitled panel';
        const at = `/dashboards/${d.id}/edit/panels/${p.id}`;
        return (
          <li>
            <span>
              <strong>{name}</strong>{' '}
              <span class="muted small">
                {VIEW_LABEL[p.details.view ?? 'table']}
                {p.actions.length > 0
                  ? ` · ${p.actions.length} row action${p.actions.length === 1 ? '' : 's'}`
                  : ''}
              </span>
            </span>
            <span class="actions">
              {props.editing === p.id ? (
                <span class="badge">editing</span>
              ) : (
                <a class="button quiet small" href={`/dashboards/${d.id}/edit?panel=${p.id}#panel-editor`}>
                  Edit<span class="sr-only"> {name}</span>
                </a>
              )}
              <MoveButton action={`${at}/move`} csrf={props.csrf} dir="up" name={name} disabled={i === 0} />
              <MoveButton
                action={`${at}/move`}
                csrf={props.csrf}
                dir="down"
                name={name}
                disabled={i === d.panels.length - 1}
              />
              <form method="post" action={`${at}/delete`} class="inline">
                <Csrf token={props.csrf} />
                <button type="submit" class="small bad">
                  Delete<span class="sr-only"> {name}</span>
                </button>
              </form>
            </span>
          </li>
        );
      })}
    </ol>
  );
}

function MoveButton(props: {
  action: string;
  csrf: string;
  dir: 'up' | 'down';
  name: string;
  disabled: boolean;
}) {
  return (
    <form method="post" action={props.action} class="inline">
      <Csrf token={props.csrf} />
      <input type="hidden" name="dir" value={props.dir} />
      <button
        type="submit"
        class="small quiet"
        disabled={props.disabled}
        aria-label={`Move ${props.name} ${props.dir}`}
      >
        {props.dir === 'up' ? '↑' : '↓'}
      </button>
    </form>
  );
}

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

function PanelEditorForm(props: {
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

function Sharing(props: {
  dashboard: DashboardRow;
  csrf: string;
  choices: BuilderChoices;
  roles: string[];
  grants: Array<{ user_id: string; email: string }>;
  base: string;
}) {
  const d = props.dashboard;
  return (
    <div class="card" id="sharing">
      <h2>Sharing</h2>
      {!d.restricted_access ? (
        <p class="muted">
          Everyone in the organization can see this dashboard. To share it with chosen people and roles only,
          choose "Only the people and roles it is shared with" in Settings.
        </p>
      ) : (
        <>
          <p class="muted">Its creator and super admins always see it. Shared with:</p>
          <ul class="plain">
            {props.roles.length === 0 && props.grants.length === 0 ? <li class="muted">nobody yet</li> : null}
            {props.roles.map((r) => (
              <li>
                everyone with the <strong>{r}</strong> role{' '}
                <UnshareButton
                  base={props.base}
                  csrf={props.csrf}
                  field="role"
                  value={r}
                  name={`the ${r} role`}
                />
              </li>
            ))}
            {props.grants.map((g) => (
              <li>
                {g.email}{' '}
                <UnshareButton
                  base={props.base}
                  csrf={props.csrf}
                  field="user_id"
                  value={g.user_id}
                  name={g.email}
                />
              </li>
            ))}
          </ul>
          <form method="post" action={`${props.base}/share`} class="row">
            <Csrf token={props.csrf} />
            <div>
              <label for="share-role">Share with a role</label>
              <select id="share-role" name="role">
                <option value="member">Members</option>
                <option value="admin">Admins</option>
              </select>
            </div>
            <button type="submit" class="fit">
              Share with role
            </button>
          </form>
          <form method="post" action={`${props.base}/share`} class="row">
            <Csrf token={props.csrf} />
            <div>
              <label for="share-person">Share with a person</label>
              <select id="share-person" name="user_id">
                {props.choices.people.map((p) => (
                  <option value={p.id}>{p.email}</option>
                ))}
              </select>
            </div>
            <button type="submit" class="fit">
              Share with person
            </button>
          </form>
        </>
      )}
    </div>
  );
}

function UnshareButton(props: { base: string; csrf: string; field: string; value: string; name: string }) {
  return (
    <form method="post" action={`${props.base}/unshare`} class="inline">
      <Csrf token={props.csrf} />
      <input type="hidden" name={props.field} value={props.value} />
      <button type="submit" class="small quiet">
        Stop sharing<span class="sr-only"> with {props.name}</span>
      </button>
    </form>
  );
}
