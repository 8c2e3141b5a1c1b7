// The workflow editor (issue 16). The page draws the frame and one <template> per repeated part
// (input, step of each kind, header); the island script (assets/workflow-editor.js) clones them,
// fills them from the definition, reads them back into the SPEC.md 4.1 object, and asks the
// server to check it as the person types. No rule is written here: the server's answer places each
// error under its field, so the editor cannot disagree with POST/PATCH.
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { presentWorkflow } from '../../automation/present.ts';
import { Flash } from './components.tsx';

export type WorkflowJson = ReturnType<typeof presentWorkflow>;

export interface EditorProps {
  workflow: WorkflowJson | null;
  /** Credentials the editor may pick for query steps, labelled "database · username". */
  credentials: Array<{ id: string; label: string }>;
  /** Chat channels already in use in the organization (databases and chat steps). */
  channels: string[];
  people: Array<{ id: string; email: string }>;
  csrf: string;
}

export const STEP_KINDS: Array<[string, string]> = [
  ['query', 'Query'],
  ['api', 'API call'],
  ['chat', 'Chat message'],
  ['chat_reply', 'Chat reply'],
  ['approval', 'Approval'],
  ['condition', 'Condition'],
];

/**
 * One labelled control with its hint and error slot. `field` is the path inside its part
 * (`action.query`); the island gives each control an id, ties the label and points
 * aria-describedby at the hint and the error.
 */
function Field(props: { field: string; label: string; hint?: string; children: Child }) {
  return (
    <div class="field" data-wrap={props.field}>
      {/* biome-ignore lint/a11y/noLabelWithoutControl: a template is cloned many times, so ids cannot be fixed in markup; the island sets for= on each clone. */}
      <label>{props.label}</label>
      {props.children}
      {props.hint ? <p class="hint small muted">{props.hint}</p> : null}
      <p class="field-error small error" hidden />
    </div>
  );
}

const Seconds = (props: { field: string; label: string; hint: string }) => (
  <Field field={props.field} label={props.label} hint={props.hint}>
    <input data-field={props.field} data-type="int?" type="number" min="1" inputmode="numeric" />
  </Field>
);

/** Who: roles and people, read back as [{role} | {user_id}] (schema.ts `Permission`). */
function People(props: { field: string; legend: string; hint: string; people: EditorProps['people'] }) {
  return (
    <fieldset data-field={props.field} data-type="permissions" class="people">
      <legend>{props.legend}</legend>
      <p class="small muted">{props.hint}</p>
      {['super_admin', 'admin', 'member'].map((role) => (
        <label class="check">
          <input type="checkbox" value={`role:${role}`} /> every {role.replace('_', ' ')}
        </label>
      ))}
      {props.people.map((p) => (
        <label class="check">
          <input type="checkbox" value={`user:${p.id}`} /> {p.email}
        </label>
      ))}
      <p class="field-error small error" hidden />
    </fieldset>
  );
}

function StepTemplate(props: { kind: string; label: string; e: EditorProps }) {
  const body: Record<string, Child> = {
    query: (
      <>
        <Field field="action.credential_id" label="Credential">
          <select data-field="action.credential_id">
            <option value="">Choose a credential…</option>
            {props.e.credentials.map((c) => (
              <option value={c.id}>{c.label}</option>
            ))}
          </select>
        </Field>
        <Field
          field="action.query"
          label="SQL"
          hint="Template: ${input} and ${step.name.output.rows[0][0]} are bound as parameters."
        >
          <textarea data-field="action.query" rows={4} spellcheck={false} />
        </Field>
        <Seconds field="action.timeout_seconds" label="Timeout (seconds)" hint="Empty: the credential's." />
      </>
    ),
    api: (
      <>
        <div class="row">
          <Field field="action.method" label="Method">
            <select data-field="action.method">
              {['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
                <option>{m}</option>
              ))}
            </select>
          </Field>
          <Field field="action.expected_status" label="Expected status">
            <input
              data-field="action.expected_status"
              data-type="int"
              type="number"
              inputmode="numeric"
              value="200"
            />
          </Field>
        </div>
        <Field field="action.endpoint" label="URL" hint="http:// or https://; may use ${…}.">
          <input data-field="action.endpoint" type="url" inputmode="url" spellcheck={false} />
        </Field>
        <fieldset data-field="action.headers" data-type="headers">
          <legend>Headers</legend>
          <p class="small muted">
            Values are stored encrypted and never shown again; leave a stored one empty to keep it.
          </p>
          <div class="headers" />
          <button type="button" class="quiet small" data-add="header">
            Add header
          </button>
          <p class="field-error small error" hidden />
        </fieldset>
        <Field field="action.body" label="Body" hint="Template; empty sends none.">
          <textarea data-field="action.body" data-type="text?" rows={3} spellcheck={false} />
        </Field>
        <label class="check">
          <input type="checkbox" data-field="action.include_service_jwt" data-type="bool" /> Send a signed
          x-service-jwt
        </label>
        <Seconds field="action.timeout_seconds" label="Timeout (seconds)" hint="Empty: the default." />
      </>
    ),
    chat: (
      <>
        <Field field="action.chat_channel" label="Channel">
          <input data-field="action.chat_channel" list="wf-channels" placeholder="#ops" />
        </Field>
        <Field field="action.message" label="Message" hint="Template.">
          <textarea data-field="action.message" rows={3} />
        </Field>
        <Field field="action.link_text" label="Link text" hint="Text of the link to the run; empty for none.">
          <input data-field="action.link_text" data-type="text?" />
        </Field>
      </>
    ),
    chat_reply: (
      <>
        <Field field="action.step_name" label="Reply in the thread of step">
          <input data-field="action.step_name" spellcheck={false} />
        </Field>
        <Field field="action.message" label="Message" hint="Template.">
          <textarea data-field="action.message" rows={3} />
        </Field>
      </>
    ),
    approval: (
      <>
        <Field field="action.reviews_required" label="Approvals needed">
          <input
            data-field="action.reviews_required"
            data-type="int"
            type="number"
            min="1"
            value="1"
            inputmode="numeric"
          />
        </Field>
        <div class="row">
          <Field field="action.timeout_seconds" label="Expires after" hint="Empty: waits until decided.">
            <input
              data-field="action.timeout_seconds"
              data-type="duration"
              type="number"
              min="1"
              inputmode="numeric"
            />
          </Field>
          <div class="field unit">
            {/* biome-ignore lint/a11y/noLabelWithoutControl: tied by the island, as in Field. */}
            <label>Unit</label>
            <select data-unit-for="action.timeout_seconds">
              <option value="1">seconds</option>
              <option value="60">minutes</option>
              <option value="3600">hours</option>
            </select>
          </div>
        </div>
        <Field field="action.on_timeout" label="When it expires">
          <select data-field="action.on_timeout">
            <option value="fail">fail the run</option>
            <option value="reject">record a rejection and end the run</option>
          </select>
        </Field>
        <People
          field="permissions"
          legend="Approvers"
          hint="Nobody ticked: any person other than who started the run."
          people={props.e.people}
        />
      </>
    ),
    condition: (
      <>
        <Field
          field="action.expression"
          label="Continue only when"
          hint="e.g. ${step.count.output.rows[0][0]} > 0 && ${dry_run} == false"
        >
          <input data-field="action.expression" spellcheck={false} />
        </Field>
        <Field field="action.on_false" label="When false, mark the run">
          <select data-field="action.on_false">
            <option value="fail">failed</option>
            <option value="succeed">succeeded</option>
          </select>
        </Field>
      </>
    ),
  };
  return (
    <template id={`tpl-step-${props.kind}`}>
      <li class="card step" data-kind={props.kind}>
        <div class="step-head">
          <h3>
            <span class="step-no" /> {props.label}
          </h3>
          <div class="actions">
            <button type="button" class="quiet small" data-move="-1">
              Move up
            </button>
            <button type="button" class="quiet small" data-move="1">
              Move down
            </button>
            <button type="button" class="quiet small bad-text" data-remove="step">
              Remove
            </button>
          </div>
        </div>
        <p class="field-error small error" data-for-part hidden />
        <Field
          field="name"
          label="Step name"
          hint="Letters, digits and _; later steps use ${step.<name>.output…}."
        >
          <input data-field="name" spellcheck={false} autocomplete="off" />
        </Field>
        {body[props.kind]}
        <Field field="condition" label="Run only when (optional)" hint="An expression; empty: always.">
          <input data-field="condition" data-type="text?" spellcheck={false} />
        </Field>
      </li>
    </template>
  );
}

export function WorkflowEditor(props: EditorProps) {
  const wf = props.workflow;
  return (
    <section class="wf-editor">
      <style>{raw(EDITOR_CSS)}</style>
      <p class="muted">
        <a href="/workflows">Workflows</a> / {wf ? <a href={`/workflows/${wf.id}`}>{wf.name}</a> : null}
      </p>
      <h1>{wf ? `Edit ${wf.name}` : 'New workflow'}</h1>
      <Flash />
      <noscript>
        <p class="warning">
          The editor needs JavaScript. The same definition can be sent to POST /api/v1/workflows.
        </p>
      </noscript>
      <form id="wf-editor" novalidate data-workflow-id={wf?.id ?? ''} data-csrf={props.csrf}>
        <div class="card">
          <Field field="name" label="Name">
            <input data-field="name" autocomplete="off" />
          </Field>
          <Field field="group" label="Group (optional)" hint="Folders the workflow list.">
            <input data-field="group" data-type="text?" />
          </Field>
        </div>
        <h2>Inputs</h2>
        <div id="wf-inputs" />
        <button type="button" class="quiet" data-add="input">
          Add input
        </button>
        <h2>Steps</h2>
        <p class="small muted">Steps run in order. Move a step with its buttons (or Alt+↑/↓ inside it).</p>
        <ol id="wf-steps" class="steps" />
        <div class="row card add-step">
          <div>
            <label for="wf-new-kind">New step</label>
            <select id="wf-new-kind">
              {STEP_KINDS.map(([k, label]) => (
                <option value={k}>{label}</option>
              ))}
            </select>
          </div>
          <button type="button" class="fit" data-add="step">
            Add step
          </button>
        </div>
        <h2>Triggers and access</h2>
        <div class="card">
          <Field
            field="cron_schedule"
            label="Cron schedule (UTC, optional)"
            hint="5 fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * MON-FRI."
          >
            <input data-field="cron_schedule" data-type="text?" spellcheck={false} autocomplete="off" />
          </Field>
          <div id="wf-cron-preview" aria-live="polite" class="small" />
          <Field
            field="trigger_tracker_label"
            label="Tracker label (optional)"
            hint="An issue given this label starts a run."
          >
            <input data-field="trigger_tracker_label" data-type="label" autocomplete="off" />
          </Field>
          <People
            field="run_permissions"
            legend="Who may run it"
            hint="Nobody ticked: every person of the organization. Super admins always may."
            people={props.people}
          />
        </div>
        <ul id="wf-other-errors" class="error" />
        <div class="actions save-bar">
          <button type="submit">{wf ? 'Save changes' : 'Create workflow'}</button>
          <a href={wf ? `/workflows/${wf.id}` : '/workflows'}>Cancel</a>
          <span id="wf-status" role="status" aria-live="polite" class="muted small" />
        </div>
      </form>
      <datalist id="wf-channels">
        {props.channels.map((c) => (
          <option value={c} />
        ))}
      </datalist>
      <template id="tpl-input">
        <div class="card input-row">
          <div class="row">
            <Field field="key" label="Input name">
              <input data-field="key" spellcheck={false} autocomplete="off" />
            </Field>
            <Field field="type" label="Type">
              <select data-field="type">
                {['string', 'integer', 'float', 'boolean'].map((t) => (
                  <option>{t}</option>
                ))}
              </select>
            </Field>
            <Field field="default" label="Default (optional)" hint="Needed for scheduled runs.">
              <input data-field="default" data-type="default" autocomplete="off" />
            </Field>
          </div>
          <Field field="description" label="Description">
            <input data-field="description" />
          </Field>
          <button type="button" class="quiet small" data-remove="input">
            Remove input
          </button>
        </div>
      </template>
      <template id="tpl-header">
        <div class="row header-row">
          <input data-part="name" aria-label="Header name" placeholder="Authorization" spellcheck={false} />
          <input data-part="value" aria-label="Header value" type="password" autocomplete="off" />
          <button type="button" class="quiet small fit" data-remove="header">
            Remove
          </button>
        </div>
      </template>
      {STEP_KINDS.map(([kind, label]) => (
        <StepTemplate kind={kind} label={label} e={props} />
      ))}
      {/* The definition as the API returns it; "<" escaped so the JSON cannot close the script. */}
      <script type="application/json" id="wf-initial">
        {raw(JSON.stringify(wf).replaceAll('<', '\\u003c'))}
      </script>
      <script src="/assets/workflow-editor.js" defer />
    </section>
  );
}

const EDITOR_CSS = `
.wf-editor form { max-width:46rem; }
.wf-editor .row { align-items:flex-start; gap:0 .75rem; }
.wf-editor .row > .unit { flex:0 1 9rem; }
.wf-editor .add-step { align-items:flex-end; }
.wf-editor .steps { list-style:none; padding:0; margin:0; }
.wf-editor .step-head { display:flex; flex-wrap:wrap; justify-content:space-between; align-items:center; gap:.5rem; }
.wf-editor .step-head h3 { margin:0; font-size:1.05rem; }
.wf-editor .step-no { color:var(--muted); }
.wf-editor .field-error:not([hidden]) { margin:.2rem 0 0; }
.wf-editor [aria-invalid=true] { border-color:var(--bad); }
.wf-editor .hint { margin:.15rem 0 0; }
.wf-editor .header-row { margin:.3rem 0; }
.wf-editor .header-row > input { flex:1 1 9rem; }
.wf-editor .people { max-height:16rem; overflow:auto; }
.wf-editor .save-bar { padding:.5rem 0; }
.wf-editor .bad-text { color:var(--bad); }
.wf-editor .step.moved { outline:2px solid var(--accent); }
`;
