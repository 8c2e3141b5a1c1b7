import type { DashboardRow } from '../../../store/dashboards.ts';
import { Csrf, Flash } from '../kit/components.tsx';
import {
  type BuilderChoices,
  type PanelEditor,
  PanelEditorForm,
  previewPanel,
  VIEW_LABEL,
} from './panel-editor-view.tsx';
import { ChartScript, chartOfState } from './view.tsx';

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
          <li id={`panel-${p.id}`}>
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
