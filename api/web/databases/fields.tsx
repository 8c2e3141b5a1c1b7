// Form fields of the database pages, with the validation message of each under it.
import type { Child } from 'hono/jsx';
import { ADAPTERS, DEFAULT_PORTS } from '../../../adapters/types.ts';
import type { CredentialRow, DatabaseRow } from '../../../store/databases.ts';

/** Field name → the message the shared schema gave for it. */
export type FieldErrors = Record<string, string>;

export function Field(props: {
  name: string;
  label: string;
  errors: FieldErrors;
  value?: string | number | null | undefined;
  type?: string;
  required?: boolean;
  hint?: string;
  autocomplete?: string;
  /** Makes the id unique where the same form repeats on a page (one per credential). */
  idScope?: string | undefined;
}) {
  const error = props.errors[props.name];
  const id = props.idScope ? `f-${props.idScope}-${props.name}` : `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value === null || props.value === undefined ? '' : String(props.value)}
        required={props.required}
        autocomplete={props.autocomplete ?? 'off'}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {props.hint ? <div class="muted small">{props.hint}</div> : null}
      {error ? (
        <div class="error small" id={`${id}-error`}>
          {error}
        </div>
      ) : null}
    </div>
  );
}

export function Check(props: { name: string; label: string; checked: boolean; hint?: string }) {
  return (
    <label class="check">
      <input type="checkbox" name={props.name} checked={props.checked} /> {props.label}
      {props.hint ? <span class="muted small"> — {props.hint}</span> : null}
    </label>
  );
}

/** Connection and policy settings of a database (registration and edit). */
export function DatabaseSettings(props: {
  db: Partial<DatabaseRow> | null;
  errors: FieldErrors;
  agents: Array<{ id: string; name: string }>;
}) {
  const d = props.db ?? {};
  const e = props.errors;
  const upload = (name: string, label: string, configured: boolean) => (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <input id={`f-${name}`} name={name} type="file" accept=".pem,.crt,.key,text/plain" />
      {configured ? (
        <label class="check">
          <input type="checkbox" name={`clear_${name}`} /> remove the stored one
        </label>
      ) : null}
      {e[name] ? <div class="error small">{e[name]}</div> : null}
    </div>
  );
  return (
    <>
      <fieldset>
        <legend>Connection</legend>
        <Field name="name" label="Name" value={d.name} errors={e} required />
        <div class="field">
          <label for="f-adapter">Engine</label>
          <select id="f-adapter" name="adapter">
            {ADAPTERS.map((a) => (
              <option value={a} selected={(d.adapter ?? 'postgres') === a}>
                {a} (port {DEFAULT_PORTS[a]})
              </option>
            ))}
          </select>
        </div>
        <div class="row">
          <Field name="hostname" label="Host" value={d.hostname} errors={e} required />
          <Field
            name="port"
            label="Port"
            value={d.port}
            errors={e}
            type="number"
            hint="empty: the engine's default"
          />
        </div>
        <Field name="database" label="Database name" value={d.database} errors={e} required />
        <div class="field">
          <label for="f-agent_id">Reached through agent</label>
          <select id="f-agent_id" name="agent_id">
            <option value="">— directly —</option>
            {props.agents.map((a) => (
              <option value={a.id} selected={d.agent_id === a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
      </fieldset>
      <fieldset>
        <legend>TLS</legend>
        <Check name="ssl" label="Encrypt the connection (SSL/TLS)" checked={d.ssl ?? false} />
        <Check
          name="verify_server_hostname"
          label="The certificate must name the host (verify-full)"
          checked={d.verify_server_hostname ?? false}
          hint="needs a CA certificate"
        />
        {upload('ssl_ca_cert', 'CA certificate (PEM) — verifies the server', Boolean(d.ssl_ca_cert))}
        {upload('ssl_cert', 'Client certificate (PEM)', Boolean(d.ssl_client_cert))}
        {upload('ssl_key', 'Client key (PEM), stored encrypted', Boolean(d.ssl_client_key_enc))}
      </fieldset>
      <fieldset>
        <legend>Access and review</legend>
        <Check
          name="restrict_access"
          label="Restricted: only people granted access see it"
          checked={d.restrict_access ?? false}
        />
        <Check
          name="review_bypass_allowed"
          label="A super admin may bypass reviews, acknowledged and audited"
          checked={d.review_bypass_allowed ?? false}
        />
        <Field name="group" label="Group" value={d.group_name} errors={e} hint="folders in lists" />
        <Field
          name="slack_channel"
          label="Chat channel for review requests"
          value={d.slack_channel}
          errors={e}
          hint="e.g. #db-reviews"
        />
      </fieldset>
      <fieldset>
        <legend>AI clients (MCP)</legend>
        <Check name="ai_enabled" label="AI clients may use this database" checked={d.ai_enabled ?? false} />
        <Field
          name="ai_max_rows"
          label="Rows an AI query may return at most"
          value={d.ai_max_rows ?? 500}
          errors={e}
          type="number"
        />
      </fieldset>
    </>
  );
}

/** One credential's fields; `prefix` distinguishes the slots of the registration form. */
export function CredentialFields(props: {
  prefix: string;
  cred: Partial<CredentialRow> | null;
  errors: FieldErrors;
  isNew: boolean;
  defaultControl: Child;
  /** Where several credential forms share a page: each one's ids stay its own (labels find their field). */
  idScope?: string;
}) {
  const c = props.cred ?? {};
  const p = props.prefix;
  const scope = props.idScope;
  return (
    <>
      <div class="row">
        <Field
          name={`${p}username`}
          label="Database user"
          value={c.username}
          errors={props.errors}
          idScope={scope}
          required={p === 'c0_' || !props.isNew}
        />
        <Field
          name={`${p}password`}
          label="Password"
          type="password"
          errors={props.errors}
          idScope={scope}
          autocomplete="new-password"
          hint={props.isNew ? 'stored encrypted, never shown again' : 'leave empty to keep the stored one'}
        />
      </div>
      <div class="row">
        <Field
          name={`${p}reviews_required`}
          label="Approvals before a query runs"
          value={c.reviews_required ?? 0}
          type="number"
          errors={props.errors}
          idScope={scope}
        />
        <Field
          name={`${p}timeout`}
          label="Statement timeout (seconds)"
          value={c.timeout}
          type="number"
          errors={props.errors}
          idScope={scope}
          hint="empty: 30 s"
        />
      </div>
      <RiskFields prefix={p} cred={c} errors={props.errors} idScope={scope} />
      <Check
        name={`${p}ai_allowed`}
        label="AI clients may run as this credential"
        checked={c.ai_allowed ?? false}
      />
      <Check
        name={`${p}restrict_access`}
        label="Only granted people and roles may use it"
        checked={c.restrict_access ?? false}
        hint="keeps an unreviewed credential from undoing a reviewed one"
      />
      {props.defaultControl}
    </>
  );
}

const RISK_LEVELS = [
  { level: 'ordinary', label: 'Ordinary writes' },
  { level: 'no_where', label: 'Writes without WHERE' },
  { level: 'large', label: 'Large writes' },
  { level: 'ddl', label: 'DDL (schema changes)' },
] as const;

/**
 * Per risk level: the approvals it needs (never fewer than the credential's own number) and the
 * role its approvers must hold (governance/risk-rules.ts), and the row count above which a write
 * is large.
 */
function RiskFields(props: {
  prefix: string;
  cred: Partial<CredentialRow>;
  errors: FieldErrors;
  idScope?: string | undefined;
}) {
  const { prefix: p, cred: c, errors } = props;
  const rules = c.risk_reviews ?? {};
  const id = (name: string) => (props.idScope ? `f-${props.idScope}-${name}` : `f-${name}`);
  const shown = new Set([
    `${p}large_write_rows`,
    ...RISK_LEVELS.flatMap((l) => [
      `${p}risk_reviews.${l.level}.reviews_required`,
      `${p}risk_reviews.${l.level}.approver_role`,
    ]),
  ]);
  // An error on a level the form does not show (one it does not know, or the whole object).
  const other = Object.entries(errors).filter(([k]) => k.startsWith(`${p}risk_reviews`) && !shown.has(k));
  return (
    <details open={Object.keys(rules).length > 0 || other.length > 0 || undefined}>
      <summary>Risk levels: approvals per kind of write</summary>
      <Field
        name={`${p}large_write_rows`}
        label="A write is large above this many rows in its preview"
        value={c.large_write_rows ?? 1000}
        type="number"
        errors={errors}
        idScope={props.idScope}
      />
      {RISK_LEVELS.map(({ level, label }) => {
        const rule = rules[level];
        const roleName = `${p}risk_reviews.${level}.approver_role`;
        const roleError = errors[roleName];
        return (
          <div class="row">
            <Field
              name={`${p}risk_reviews.${level}.reviews_required`}
              label={`${label}: approvals`}
              value={rule?.reviews_required}
              type="number"
              errors={errors}
              idScope={props.idScope}
              hint="empty: the number above"
            />
            <div class="field">
              <label for={id(roleName)}>{label}: who may approve</label>
              <select
                id={id(roleName)}
                name={roleName}
                aria-invalid={roleError ? 'true' : undefined}
                aria-describedby={roleError ? `${id(roleName)}-error` : undefined}
              >
                <option value="" selected={!rule?.approver_role}>
                  anyone with access but the author
                </option>
                <option value="admin" selected={rule?.approver_role === 'admin'}>
                  admins and super admins
                </option>
                <option value="super_admin" selected={rule?.approver_role === 'super_admin'}>
                  super admins
                </option>
              </select>
              {roleError ? (
                <div class="error small" id={`${id(roleName)}-error`}>
                  {roleError}
                </div>
              ) : null}
            </div>
          </div>
        );
      })}
      {other.map(([k, message]) => (
        <div class="error small" data-field={k}>
          {k.slice(p.length)}: {message}
        </div>
      ))}
    </details>
  );
}
