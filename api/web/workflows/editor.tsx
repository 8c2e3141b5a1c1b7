// The workflow editor. The page draws the frame and one <template> per repeated part
// (input, step of each kind, header); the island script (assets/workflow-editor.js) clones them,
// fills them from the definition, reads them back into the SPEC.md 4.1 object, and asks the
// server to check it as the person types. No rule is written here: the server's answer places each
// error under its field, so the editor cannot disagree with POST/PATCH.
import { raw } from 'hono/html';
import type { presentWorkflow } from '../../../automation/present.ts';
import { Flash } from '../kit/components.tsx';
import { Field, People, type PickerData, STEP_KINDS, StepTemplate } from './steps.tsx';

export type WorkflowJson = ReturnType<typeof presentWorkflow>;

export interface EditorProps extends PickerData {
  workflow: WorkflowJson | null;
  /** Chat channels already in use in the organization (databases and chat steps). */
  channels: string[];
  csrf: string;
}

export function WorkflowEditor(props: EditorProps) {
  const wf = props.workflow;
  return (
    <section class="wf-editor">
      <link rel="stylesheet" href="/assets/workflow-editor.css" />
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
