// Data-protection policies of one database: rules, who they apply to, and a preview
// of what a person sees of a table. Unnamed columns are hidden by default, and the page says so.
import type { SchemaTable } from '../../../adapters/types.ts';
import type { PolicyView } from '../../../governance/protection/policies.ts';
import type { DatabaseRow } from '../../../store/databases.ts';
import type { UserRow } from '../../../store/users.ts';
import type { PolicyPreview } from '../../../workspace/policy-preview.ts';
import type { RowsPreview } from '../../../workspace/preview-as.ts';
import { Csrf, Flash, PostButton, ResultTable } from '../kit/components.tsx';

const ACTION_TEXT: Record<string, string> = {
  show: 'shown',
  hide: 'hidden (null)',
  mask: "masked ('****')",
  hash: 'hashed (equal values stay equal)',
  partial: 'partly shown',
};

export function PoliciesPage(props: {
  db: DatabaseRow;
  policies: PolicyView[];
  people: UserRow[];
  tables: SchemaTable[];
  selected: PolicyView | null;
  preview: PolicyPreview | null;
  /** Sample rows run as the chosen person (an admin's audited action). */
  rows: RowsPreview | null;
  previewFor: { userId: string; table: string } | null;
  csrf: string;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const base = `/databases/${props.db.id}/policies`;
  const p = props.selected;
  return (
    <section>
      <p class="muted">
        <a href="/databases">Databases</a> / <a href={`/databases/${props.db.id}`}>{props.db.name}</a> /
      </p>
      <h1>Data protection on {props.db.name}</h1>
      <Flash notice={props.notice} error={props.error} />
      <p>
        A policy applies to the people and roles it is assigned to (a person's own assignment wins over their
        role's). Under a policy, <strong>every column no rule names is hidden</strong>: name a column with{' '}
        <em>show</em> to let it through, or a table's <code>*</code> to set a default for that table.
      </p>
      <div class="row">
        <ul class="plain fit">
          {props.policies.map((v) => (
            <li>
              <a
                href={`${base}/${v.policy.id}`}
                aria-current={v.policy.id === p?.policy.id ? 'page' : undefined}
              >
                {v.policy.name}
              </a>{' '}
              <span class="muted small">
                {v.rules.length} rule(s) · {v.assignments.length} assignment(s)
              </span>
            </li>
          ))}
          {props.policies.length === 0 ? (
            <li class="muted">No policy yet: everyone with access sees every column.</li>
          ) : null}
        </ul>
        <form method="post" action={base} class="fit">
          <Csrf token={props.csrf} />
          <label for="policy-name">New policy</label>
          <input id="policy-name" name="name" required maxlength={200} placeholder="e.g. Support staff" />
          <button type="submit" class="small">
            Create
          </button>
        </form>
      </div>
      {p ? <PolicyEditor {...props} p={p} base={`${base}/${p.policy.id}`} /> : null}
      <PreviewForm {...props} base={base} />
      {props.preview ? <Preview preview={props.preview} /> : null}
      {props.rows ? <SampleRows rows={props.rows} /> : null}
    </section>
  );
}

/**
 * Whether a rule names a table or column the database does not have as its default credential
 * reads it: a mistyped `ssn` rule beside a `users.*` shown rule would leave ssn shown. Nothing is
 * said when the schema could not be read.
 */
function unknownIn(
  tables: SchemaTable[],
  r: { schema_name: string | null; table_name: string; column_name: string },
  foldCase: boolean,
): 'table' | 'column' | null {
  if (tables.length === 0) return null;
  const eq = (a: string, b: string) => (foldCase ? a.toLowerCase() === b.toLowerCase() : a === b);
  const matching = tables.filter(
    (t) => eq(t.name, r.table_name) && (r.schema_name === null || eq(t.schema, r.schema_name)),
  );
  if (matching.length === 0) return 'table';
  if (r.column_name === '*') return null;
  return matching.some((t) => t.columns.some((c) => eq(c.name, r.column_name))) ? null : 'column';
}

function Unknown(props: { what: 'table' | 'column' | null }) {
  if (!props.what) return null;
  return (
    <>
      {' '}
      <span class="badge warn">no such {props.what} in the database</span>
    </>
  );
}

function PolicyEditor(props: Parameters<typeof PoliciesPage>[0] & { p: PolicyView; base: string }) {
  const { p, base } = props;
  const roles = new Set(p.assignments.flatMap((a) => (a.role ? [a.role] : [])));
  const users = new Set(p.assignments.flatMap((a) => (a.user_id ? [a.user_id] : [])));
  return (
    <>
      <h2>{p.policy.name}</h2>
      <div class="scroll">
        <table class="stack">
          <thead>
            <tr>
              <th>Table</th>
              <th>Column</th>
              <th>Treatment</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {p.rules.map((r, i) => (
              <tr>
                <td data-label="Table">
                  {r.schema_name ? `${r.schema_name}.${r.table_name}` : r.table_name}
                </td>
                <td data-label="Column">
                  {r.column_name === '*' ? '* (every other column)' : r.column_name}
                  <Unknown what={unknownIn(props.tables, r, props.db.adapter === 'mysql')} />
                </td>
                <td data-label="Treatment">
                  {ACTION_TEXT[r.action]}
                  {r.action === 'partial' ? ` — first ${r.keep_first}, last ${r.keep_last}` : ''}
                </td>
                <td>
                  <PostButton action={`${base}/rules/${i}/delete`} csrf={props.csrf} label="Remove" />
                </td>
              </tr>
            ))}
            {p.rules.length === 0 ? (
              <tr>
                <td colspan={4} class="muted">
                  No rule: everything is hidden from the people this policy applies to.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <form method="post" action={`${base}/rules`} class="card wide">
        <Csrf token={props.csrf} />
        <h3>Add a rule</h3>
        <div class="row">
          <div>
            <label for="rule-table">Table</label>
            <select id="rule-table" name="table">
              {props.tables.map((t) => (
                <option value={`${t.schema}.${t.name}`}>{`${t.schema}.${t.name}`}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="rule-column">Column (or *)</label>
            <input id="rule-column" name="column" required maxlength={128} list="rule-columns" />
            <datalist id="rule-columns">
              {[...new Set(props.tables.flatMap((t) => t.columns.map((c) => c.name)))].map((c) => (
                <option value={c} />
              ))}
            </datalist>
          </div>
        </div>
        <div class="row">
          <div>
            <label for="rule-action">Treatment</label>
            <select id="rule-action" name="action">
              {Object.entries(ACTION_TEXT).map(([k, label]) => (
                <option value={k}>{label}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="rule-first">Partly shown: keep first</label>
            <input id="rule-first" name="keep_first" type="number" min={0} max={64} value="0" />
          </div>
          <div>
            <label for="rule-last">keep last</label>
            <input id="rule-last" name="keep_last" type="number" min={0} max={64} value="0" />
          </div>
        </div>
        <button type="submit">Add rule</button>
      </form>
      <form method="post" action={`${base}/assignments`} class="card wide">
        <Csrf token={props.csrf} />
        <h3>Applies to</h3>
        {(['member', 'admin', 'super_admin'] as const).map((r) => (
          <label class="check">
            <input type="checkbox" name={`role_${r}`} checked={roles.has(r)} /> everyone with role {r}
          </label>
        ))}
        <label for="assign-users">People (hold Ctrl or Cmd for several)</label>
        <select id="assign-users" name="users" multiple size={Math.min(6, Math.max(2, props.people.length))}>
          {props.people.map((u) => (
            <option value={u.id} selected={users.has(u.id)}>
              {u.email}
            </option>
          ))}
        </select>
        <button type="submit">Save assignments</button>
      </form>
      <details>
        <summary class="bad">Delete this policy…</summary>
        <form method="post" action={`${base}/delete`}>
          <Csrf token={props.csrf} />
          <button type="submit" class="small bad">
            Delete {p.policy.name}
          </button>
        </form>
      </details>
    </>
  );
}

function Preview(props: { preview: PolicyPreview }) {
  const { preview } = props;
  return (
    <div class="card wide" id="preview-result" role="status">
      <p>
        {preview.policy
          ? `Policy “${preview.policy.name}” applies to this person on ${preview.table.schema}.${preview.table.name}:`
          : 'No policy applies to this person: they see every column.'}
      </p>
      <table class="stack">
        <thead>
          <tr>
            <th>Column</th>
            <th>Type</th>
            <th>They see</th>
          </tr>
        </thead>
        <tbody>
          {preview.columns.map((c) => (
            <tr>
              <td data-label="Column">{c.name}</td>
              <td data-label="Type" class="muted">
                {c.type}
              </td>
              <td data-label="They see">
                <span
                  class={`badge ${c.treatment === 'shown' ? 'ok' : c.treatment === 'hidden' ? 'bad' : 'warn'}`}
                >
                  {c.treatment}
                </span>
                {c.byDefault ? (
                  <span class="muted small"> — no rule names it (hidden by default)</span>
                ) : null}
                {c.treatment === 'partial' ? (
                  <span class="muted small">
                    {' '}
                    first {c.keepFirst ?? 0}, last {c.keepLast ?? 0} characters
                  </span>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Pick a person and a table: the columns as their policy treats them, and sample rows run as
 * them through the governed pipeline (recorded in the audit log as a preview by you).
 */
function PreviewForm(props: Parameters<typeof PoliciesPage>[0] & { base: string }) {
  if (props.tables.length === 0) return null;
  return (
    <form method="post" action={`${props.base}/preview`} class="card wide" id="preview">
      <Csrf token={props.csrf} />
      {props.selected ? <input type="hidden" name="policy" value={props.selected.policy.id} /> : null}
      <h2>Preview: what does this person see?</h2>
      <p class="muted small">
        Runs <code>select * … limit 20</code> on the table as that person — their access, their policy — and
        shows the rows they would get. The audit log records that you looked.
      </p>
      <div class="row">
        <div>
          <label for="preview-user">Person</label>
          <select id="preview-user" name="as">
            {props.people.map((u) => (
              <option value={u.id} selected={props.previewFor?.userId === u.id}>
                {u.email} ({u.role})
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="preview-table">Table</label>
          <select id="preview-table" name="table">
            {props.tables.map((t) => (
              <option
                value={`${t.schema}.${t.name}`}
                selected={props.previewFor?.table === `${t.schema}.${t.name}`}
              >
                {`${t.schema}.${t.name}`}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="fit">
          Preview
        </button>
      </div>
    </form>
  );
}

function SampleRows(props: { rows: RowsPreview }) {
  const r = props.rows;
  if (r.status === 'refused')
    return (
      <div class="card wide" id="preview-rows" role="status">
        <h3>Their query is refused</h3>
        <p class="warning">{r.reason}</p>
      </div>
    );
  return (
    <div class="card wide" id="preview-rows" role="status">
      <h3>Rows they see</h3>
      <p class="muted small">
        {r.policy ? `Under policy “${r.policy.name}”.` : 'No policy applies: values as stored.'} Masked and
        hidden cells are labelled.
      </p>
      <ResultTable
        columns={r.result.columns}
        rows={r.result.rows}
        truncated={r.result.truncated}
        messages={r.result.messages}
        marks={r.marks}
      />
    </div>
  );
}
