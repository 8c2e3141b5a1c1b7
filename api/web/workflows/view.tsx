// The workflow list and one workflow's page: what it does, a form to start a run, and for admins
// the way to the editor and to archive it.
import type { WorkflowRow } from '../../../store/workflows.ts';
import { Csrf, Flash, when } from '../kit/components.tsx';

export function WorkflowList(props: {
  workflows: WorkflowRow[];
  canEdit: boolean;
  archived: boolean;
  notice?: string | undefined;
}) {
  const groups = new Map<string, WorkflowRow[]>();
  for (const wf of props.workflows) {
    const g = wf.group_name ?? '';
    groups.set(g, [...(groups.get(g) ?? []), wf]);
  }
  return (
    <section>
      <h1>Workflows</h1>
      <Flash notice={props.notice} />
      <p class="actions">
        {props.canEdit ? (
          <a class="button" href="/workflows/new">
            New workflow
          </a>
        ) : null}
        <a href={props.archived ? '/workflows' : '/workflows?archived=1'}>
          {props.archived ? 'Hide archived' : 'Show archived'}
        </a>
      </p>
      {props.workflows.length === 0 ? <p class="muted">No workflows yet.</p> : null}
      {[...groups.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, list]) => (
          <div class="card">
            <h2>{group || 'Ungrouped'}</h2>
            <ul class="plain">
              {list.map((wf) => (
                <li>
                  <a href={`/workflows/${wf.id}`}>{wf.name}</a>{' '}
                  <span class="muted small">
                    {wf.steps.length} step{wf.steps.length === 1 ? '' : 's'}
                    {wf.cron_schedule ? ` · cron ${wf.cron_schedule} UTC` : ''}
                    {wf.archived_at ? ' · archived' : ''}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        ))}
    </section>
  );
}

export function WorkflowPage(props: {
  wf: WorkflowRow;
  canEdit: boolean;
  canRun: boolean;
  csrf: string;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const wf = props.wf;
  return (
    <section>
      <p class="muted">
        <a href="/workflows">Workflows</a> /
      </p>
      <h1>{wf.name}</h1>
      <Flash notice={props.notice} error={props.error} />
      {wf.archived_at ? <p class="warning">Archived {when(wf.archived_at)}; it can no longer run.</p> : null}
      <p class="actions">
        {props.canEdit && !wf.archived_at ? (
          <a class="button" href={`/workflows/${wf.id}/edit`}>
            Edit
          </a>
        ) : null}
        <a href={`/runs?workflow=${wf.id}`}>Runs</a>
      </p>
      {props.canRun && !wf.archived_at ? (
        <form method="post" action={`/workflows/${wf.id}/run`} class="card">
          <h2>Run it</h2>
          <Csrf token={props.csrf} />
          {wf.inputs.map((i) => (
            <>
              <label for={`run-${i.key}`}>
                {i.key} <span class="muted small">({i.type})</span>
              </label>
              <input
                id={`run-${i.key}`}
                name={`input.${i.key}`}
                value={i.default === null || i.default === undefined ? '' : String(i.default)}
                aria-describedby={i.description ? `run-${i.key}-hint` : undefined}
              />
              {i.description ? (
                <p id={`run-${i.key}-hint`} class="small muted">
                  {i.description}
                </p>
              ) : null}
            </>
          ))}
          <button type="submit">Start a run</button>
        </form>
      ) : null}
      <div class="card wide">
        <h2>Steps</h2>
        <ol>
          {wf.steps.map((s) => (
            <li>
              <strong>{s.name}</strong> <span class="muted">{s.action.__type__.replace('_', ' ')}</span>
              {s.condition ? <span class="small muted"> · only when {s.condition}</span> : null}
            </li>
          ))}
        </ol>
        <p class="small muted">
          {wf.cron_schedule ? `Scheduled: ${wf.cron_schedule} (UTC). ` : ''}
          {wf.tracker_label_name ? `Started by the tracker label ${wf.tracker_label_name}. ` : ''}
          Updated {when(wf.updated_at)}.
        </p>
      </div>
      {props.canEdit && !wf.archived_at ? (
        <details class="card">
          <summary class="bad">Archive this workflow</summary>
          <form method="post" action={`/workflows/${wf.id}/archive`}>
            <Csrf token={props.csrf} />
            <p class="small">Its schedule stops and it can no longer run; its runs stay readable.</p>
            <button type="submit" class="bad">
              Archive
            </button>
          </form>
        </details>
      ) : null}
    </section>
  );
}
