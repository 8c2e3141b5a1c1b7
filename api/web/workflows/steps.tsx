// The repeated parts of the workflow editor: one labelled field, the people picker, and one
// <template> per step kind with that action's form (field names as in automation/schema.ts).
// The island (assets/workflow-editor.js) clones them; it reads each control by its data-field path.
import type { Child } from 'hono/jsx';

/** What the pickers offer: credentials of the organization's databases and its people. */
export interface PickerData {
  /** Credentials the editor may pick for query steps, labelled "database · username". */
  credentials: Array<{ id: string; label: string }>;
  people: Array<{ id: string; email: string }>;
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
export function Field(props: { field: string; label: string; hint?: string; children: Child }) {
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
export function People(props: { field: string; legend: string; hint: string; people: PickerData['people'] }) {
  return (
    <fieldset data-field={props.field} data-type="permissions" class="people">
      <legend>{props.legend}</legend>
      <p class="small muted">{props.hint}</p>
      {['super_admin', 'admin', 'member'].map((role) => (
        <label class="check">
          <input type="checkbox" value={`role:${role}`} /> every {role.replace('_', ' ')}
        </label>
      ))}
      {/* However many people there are, the list scrolls in its own box rather than running off it. */}
      <div class="people-list">
        {props.people.map((p) => (
          <label class="check">
            <input type="checkbox" value={`user:${p.id}`} /> {p.email}
          </label>
        ))}
      </div>
      <p class="field-error small error" hidden />
    </fieldset>
  );
}

export function StepTemplate(props: { kind: string; label: string; e: PickerData }) {
  const body: Record<string, Child> = {
    query: (
      <>
        <Field
          field="action.credential_id"
          label="Credential"
          hint="A write runs exactly once where the database has two-phase commit; credentials marked “writes run at least once” may repeat a write when a retried attempt follows a crash or timeout."
        >
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
          hint="Nobody ticked: any admin other than who started the run."
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
