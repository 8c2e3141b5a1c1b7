// The Databases pages: list with a group filter, registration, and each database's
// settings, credentials (check connection, edit, remove, who may use it) and access grants.

import type { CredentialRow, DatabaseRow } from '../../../store/databases.ts';
import type { CredentialGrantRow, GrantWithUser } from '../../../store/grants.ts';
import type { UserRow } from '../../../store/users.ts';
import { Csrf, Flash, PostButton } from '../kit/components.tsx';
import { CredentialFields, DatabaseSettings, type FieldErrors } from './fields.tsx';

export function DatabaseList(props: {
  items: Array<{ db: DatabaseRow; credentials: CredentialRow[] }>;
  groups: string[];
  group: string | undefined;
  isAdmin: boolean;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  return (
    <section>
      <h1>Databases</h1>
      <Flash notice={props.notice} error={props.error} />
      <div class="row">
        {props.isAdmin ? (
          <p class="fit">
            <a class="button" href="/databases/new">
              Register a database
            </a>
          </p>
        ) : null}
        <form method="get" action="/databases" class="fit">
          <label for="group-filter">Group</label>
          <select id="group-filter" name="group" data-autosubmit>
            <option value="">All groups</option>
            {props.groups.map((g) => (
              <option value={g} selected={g === props.group}>
                {g}
              </option>
            ))}
          </select>
          <noscript>
            <button type="submit" class="small">
              Filter
            </button>
          </noscript>
        </form>
      </div>
      {props.items.length === 0 ? (
        <p class="muted">
          {props.isAdmin
            ? 'No database yet. Register one: Countersign then governs every query to it.'
            : 'No database is shared with you yet. Ask an admin for access.'}
        </p>
      ) : (
        <div class="scroll">
          <table class="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Engine and host</th>
                <th>Group</th>
                <th>Credentials</th>
                <th>Settings</th>
              </tr>
            </thead>
            <tbody>
              {props.items.map(({ db, credentials }) => (
                <tr>
                  <td data-label="Name">
                    <a href={`/databases/${db.id}`}>{db.name}</a>
                  </td>
                  <td data-label="Engine and host">
                    {db.adapter} · {db.hostname}:{db.port}/{db.database}
                  </td>
                  <td data-label="Group">{db.group_name ?? '—'}</td>
                  <td data-label="Credentials">
                    {credentials.map((c) => (
                      <div>
                        {c.username}{' '}
                        <span class="muted small">
                          {c.reviews_required > 0 ? `${c.reviews_required} review(s)` : 'no review'}
                          {c.restrict_access ? ' · granted only' : ''}
                        </span>
                      </div>
                    ))}
                  </td>
                  <td data-label="Settings">
                    {db.restrict_access ? <span class="badge warn">restricted</span> : null}{' '}
                    {db.ai_enabled ? <span class="badge">AI · {db.ai_max_rows} rows</span> : null}{' '}
                    {db.ssl ? <span class="badge ok">TLS</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Who could see and query a database once it is registered, for the sentence on the form. */
export interface Audience {
  me: string;
  /** Super admins other than the registrant: they see every database (SPEC.md 2.2). */
  superAdmins: string[];
  /** Everyone in the organization. */
  everyone: number;
}

export function NewDatabase(props: {
  form: Record<string, string>;
  /** A blank form: the secure defaults are ticked (restricted, one review on the default credential). */
  fresh: boolean;
  errors: FieldErrors;
  /** A credential did not connect: the form offers to save anyway. */
  checkFailed: boolean;
  audience: Audience;
  agents: Array<{ id: string; name: string }>;
  csrf: string;
}) {
  const f = props.form;
  const restricted = props.fresh || f.restrict_access === 'on';
  const defaultSlot = f.default_credential ?? '0';
  const reviewsOf = (i: number) => (f[`c${i}_reviews_required`] ? Number(f[`c${i}_reviews_required`]) : 1);
  // Everything the form posted comes back (files and passwords aside: a browser never refills
  // them), or the next attempt would connect to the default port without TLS.
  const number = (v: string | undefined) => (v?.trim() ? Number(v) : undefined);
  const asDb = {
    name: f.name,
    adapter: f.adapter as DatabaseRow['adapter'],
    hostname: f.hostname,
    port: number(f.port),
    database: f.database,
    agent_id: f.agent_id || null,
    ssl: f.ssl === 'on',
    verify_server_hostname: f.verify_server_hostname === 'on',
    review_bypass_allowed: f.review_bypass_allowed === 'on',
    ai_max_rows: number(f.ai_max_rows),
    group_name: f.group ?? null,
    slack_channel: f.slack_channel ?? null,
    ai_enabled: f.ai_enabled === 'on',
    restrict_access: restricted,
  };
  const slot = (i: number) => ({
    username: f[`c${i}_username`],
    reviews_required: reviewsOf(i),
    ai_allowed: f[`c${i}_ai_allowed`] === 'on',
    restrict_access: f[`c${i}_restrict_access`] === 'on',
  });
  const reviews = reviewsOf(Number(defaultSlot) || 0);
  return (
    <section>
      <p class="muted">
        <a href="/databases">Databases</a> /
      </p>
      <h1>Register a database</h1>
      {Object.keys(props.errors).length > 0 ? (
        <p class="warning error" role="alert">
          Nothing was saved: correct the fields marked below.
        </p>
      ) : null}
      <form method="post" action="/databases" enctype="multipart/form-data" class="card wide">
        <Csrf token={props.csrf} />
        <DatabaseSettings db={asDb} errors={props.errors} agents={props.agents} />
        {[0, 1].map((i) => (
          <fieldset>
            <legend>{i === 0 ? 'Credential' : 'A second credential (optional)'}</legend>
            <CredentialFields
              prefix={`c${i}_`}
              cred={slot(i)}
              errors={props.errors}
              isNew
              defaultControl={
                <label class="check">
                  <input
                    type="radio"
                    name="default_credential"
                    value={String(i)}
                    checked={defaultSlot === String(i)}
                  />{' '}
                  Default credential (queries that name none run as it)
                </label>
              }
            />
          </fieldset>
        ))}
        <WhoCanQuery audience={props.audience} restricted={restricted} reviews={reviews} />
        {props.checkFailed ? (
          <fieldset>
            <legend>Connection check failed</legend>
            <p>
              Nothing was saved: a credential did not connect (its error is under its password). Type the
              passwords again (and choose any certificate files again) and register, or save it as it is.
            </p>
            <label class="check">
              <input type="checkbox" name="save_anyway" /> Save anyway, without a working connection
            </label>
          </fieldset>
        ) : null}
        <p class="muted small">Every credential's connection is checked before anything is saved.</p>
        <button type="submit">Register</button>
      </form>
    </section>
  );
}

/** The sentence that says, before saving, who will be able to query and what waits for review. */
function WhoCanQuery(props: { audience: Audience; restricted: boolean; reviews: number }) {
  const a = props.audience;
  const admins = a.superAdmins.length > 0 ? ` and the super admins (${a.superAdmins.join(', ')})` : '';
  return (
    <div class="card" id="who-can-query" role="note">
      <h2>Once saved</h2>
      <p>
        {props.restricted
          ? `Only you (${a.me})${admins} will see and query it; grant others access on its page. Untick "Restricted" to open it to all ${a.everyone} people in the organization.`
          : `All ${a.everyone} people in the organization will see and query it.`}
      </p>
      <p>
        {props.reviews > 0
          ? `Queries through the default credential (reads and writes) wait for ${props.reviews} approval(s) from another person.`
          : 'Queries through the default credential run at once, without review.'}
      </p>
    </div>
  );
}

export interface DatabaseDetailProps {
  db: DatabaseRow;
  credentials: CredentialRow[];
  credentialGrants: Record<string, CredentialGrantRow[]>;
  grants: GrantWithUser[];
  people: UserRow[];
  agents: Array<{ id: string; name: string }>;
  errors: FieldErrors;
  /**
   * The credential form the errors belong to: a credential's id, `new` for the add form, null
   * for the database settings. Only that form shows them, opened.
   */
  erred?: string | null;
  csrf: string;
  checked?: { credentialId: string; message: string } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}

export function DatabaseDetail(props: DatabaseDetailProps) {
  const errorsOf = (form: string | null) => (props.erred === form ? props.errors : {});
  const { db } = props;
  const base = `/databases/${db.id}`;
  const person = (id: string | null) => props.people.find((p) => p.id === id)?.email ?? id ?? '';
  return (
    <section>
      <p class="muted">
        <a href="/databases">Databases</a> /
      </p>
      <h1>{db.name}</h1>
      <Flash notice={props.notice} error={props.error} />
      <p>
        <a href={`${base}/policies`}>Data protection policies</a> — what people see of each column.
      </p>
      <h2>Credentials</h2>
      {props.credentials.map((c) => (
        <div class="card" id={`cred-${c.id}`}>
          <h3>
            {c.username} {c.default_credential ? <span class="badge">default</span> : null}{' '}
            {c.reviews_required > 0 ? (
              <span class="badge warn">{c.reviews_required} approval(s)</span>
            ) : (
              <span class="badge">no review</span>
            )}
          </h3>
          <PostButton
            action={`${base}/credentials/${c.id}/check`}
            csrf={props.csrf}
            label="Check connection"
            tone="quiet"
          />
          {props.checked?.credentialId === c.id ? (
            <p class={props.checked.message === 'ok' ? 'notice' : 'warning error'} role="status">
              {props.checked.message === 'ok' ? 'Connected: ok.' : props.checked.message}
            </p>
          ) : null}
          <details open={props.erred === c.id}>
            <summary>Edit</summary>
            <form method="post" action={`${base}/credentials/${c.id}`}>
              <Csrf token={props.csrf} />
              <CredentialFields
                idScope={c.id}
                prefix=""
                cred={c}
                errors={errorsOf(c.id)}
                isNew={false}
                defaultControl={
                  c.default_credential ? null : (
                    <label class="check">
                      <input type="checkbox" name="default_credential" /> Make it the default credential
                    </label>
                  )
                }
              />
              <button type="submit">Save credential</button>
            </form>
          </details>
          <details open={c.restrict_access}>
            <summary>Who may use it {c.restrict_access ? '' : '(everyone who sees the database)'}</summary>
            <ul class="plain">
              {(props.credentialGrants[c.id] ?? []).map((g) => (
                <li>
                  {g.role ? `everyone with role ${g.role}` : person(g.user_id)}{' '}
                  <form
                    method="post"
                    action={`${base}/credentials/${c.id}/grants/${g.id}/delete`}
                    class="inline"
                  >
                    <Csrf token={props.csrf} />
                    <button type="submit" class="small bad">
                      Remove
                    </button>
                  </form>
                </li>
              ))}
            </ul>
            <form method="post" action={`${base}/credentials/${c.id}/grants`} class="row">
              <Csrf token={props.csrf} />
              <div>
                <label for={`grant-${c.id}`}>Let use it</label>
                <select id={`grant-${c.id}`} name="grantee">
                  <option value="role:member">everyone with role member</option>
                  <option value="role:admin">everyone with role admin</option>
                  {props.people.map((p) => (
                    <option value={`user:${p.id}`}>{p.email}</option>
                  ))}
                </select>
              </div>
              <button type="submit" class="small">
                Grant
              </button>
            </form>
          </details>
          {props.credentials.length > 1 ? (
            <details>
              <summary class="bad">Remove…</summary>
              <form method="post" action={`${base}/credentials/${c.id}/delete`}>
                <Csrf token={props.csrf} />
                <button type="submit" class="small bad">
                  Remove credential {c.username}
                </button>
              </form>
            </details>
          ) : null}
        </div>
      ))}
      <details open={props.erred === 'new'}>
        <summary>Add a credential</summary>
        <form method="post" action={`${base}/credentials`} class="card">
          <Csrf token={props.csrf} />
          <CredentialFields
            idScope="new"
            prefix=""
            cred={{ reviews_required: 1 }}
            errors={errorsOf('new')}
            isNew
            defaultControl={
              <label class="check">
                <input type="checkbox" name="default_credential" /> Make it the default credential
              </label>
            }
          />
          <button type="submit">Add credential</button>
        </form>
      </details>
      {db.restrict_access ? (
        <>
          <h2>People granted access</h2>
          <ul class="plain">
            {props.grants.map((g) => (
              <li>
                {g.email} <span class="muted">({g.role})</span>{' '}
                <PostButton action={`${base}/grants/${g.user_id}/delete`} csrf={props.csrf} label="Revoke" />
              </li>
            ))}
          </ul>
          <form method="post" action={`${base}/grants`} class="row">
            <Csrf token={props.csrf} />
            <div>
              <label for="grant-user">Grant access to</label>
              <select
                id="grant-user"
                name="user_id"
                aria-invalid={props.errors.user_id ? 'true' : undefined}
                aria-describedby={props.errors.user_id ? 'grant-user-error' : undefined}
              >
                {props.people.map((p) => (
                  <option value={p.id}>{p.email}</option>
                ))}
              </select>
              {props.errors.user_id ? (
                <div class="error small" id="grant-user-error">
                  {props.errors.user_id}
                </div>
              ) : null}
            </div>
            <button type="submit" class="small">
              Grant
            </button>
          </form>
        </>
      ) : null}
      <h2>Settings</h2>
      <form method="post" action={base} enctype="multipart/form-data" class="card wide">
        <Csrf token={props.csrf} />
        <DatabaseSettings db={db} errors={errorsOf(null)} agents={props.agents} />
        <button type="submit">Save settings</button>
      </form>
      <details>
        <summary class="bad">Delete this database…</summary>
        <form method="post" action={`${base}/delete`} class="card">
          <Csrf token={props.csrf} />
          <p>Its credentials and grants go with it. Queries already audited stay in the audit log.</p>
          <label for="confirm-name">Type its name, {db.name}, to confirm</label>
          <input id="confirm-name" name="confirm" required autocomplete="off" />
          <button type="submit" class="bad">
            Delete {db.name}
          </button>
        </form>
      </details>
    </section>
  );
}
