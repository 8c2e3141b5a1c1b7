import type { presentRun } from '../../../automation/present.ts';
import type { AuditRow } from '../../../store/audit.ts';
import type { WorkflowRunRow } from '../../../store/workflow-runs.ts';
import { RUN_STATUSES } from '../../../workflows/types.ts';
import { Badge, Csrf, cellText, Flash, PostButton, ResultTable, when } from '../kit/components.tsx';

export function RunsPage(props: {
  runs: WorkflowRunRow[];
  names: Record<string, string>;
  filter: Record<string, string>;
  /** The last run shown when there are older ones (the next page starts after it). */
  next: string | null;
}) {
  const f = props.filter;
  const select = (name: string, label: string, options: Array<[string, string]>) => (
    <div>
      <label for={`filter-${name}`}>{label}</label>
      <select id={`filter-${name}`} name={name}>
        <option value="">any</option>
        {options.map(([value, text]) => (
          <option value={value} selected={f[name] === value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
  const older = new URLSearchParams({ ...f, before: props.next ?? '' });
  return (
    <section>
      <h1>Workflow runs</h1>
      <form method="get" action="/runs" class="row card wide">
        {select('workflow', 'Workflow', Object.entries(props.names))}
        {select(
          'status',
          'Status',
          RUN_STATUSES.map((s) => [s, s.replaceAll('_', ' ')]),
        )}
        {select(
          'trigger',
          'Trigger',
          ['manual', 'api', 'cron', 'tracker'].map((t) => [t, t]),
        )}
        <div>
          <label for="filter-from">From (UTC)</label>
          <input id="filter-from" name="from" type="date" value={f.from ?? ''} />
        </div>
        <div>
          <label for="filter-to">To (UTC)</label>
          <input id="filter-to" name="to" type="date" value={f.to ?? ''} />
        </div>
        <button type="submit" class="fit">
          Filter
        </button>
      </form>
      {props.runs.length === 0 ? <p class="muted">No run matches.</p> : null}
      {props.runs.length > 0 ? (
        <div class="scroll">
          <table class="stack">
            <thead>
              <tr>
                <th>Workflow</th>
                <th>Status</th>
                <th>Trigger</th>
                <th>Started</th>
                <th>Inputs</th>
              </tr>
            </thead>
            <tbody>
              {props.runs.map((r) => (
                <tr>
                  <td data-label="Workflow">
                    <a href={`/runs/${r.workflow_id}/${r.id}`}>
                      {props.names[r.workflow_id] ?? r.workflow_id}
                    </a>
                    <div class="muted">{r.id}</div>
                  </td>
                  <td data-label="Status">
                    <Badge status={r.status} />
                  </td>
                  <td data-label="Trigger">{r.trigger}</td>
                  <td data-label="Started">{when(r.started_at)}</td>
                  <td data-label="Inputs">
                    <code>{JSON.stringify(r.inputs)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {props.next ? (
        <p>
          <a href={`/runs?${older}`}>Older runs</a>
        </p>
      ) : null}
    </section>
  );
}

type RunShape = ReturnType<typeof presentRun>;

/** The message after starting a run; the run page drops it once the run has ended. */
export const RUN_STARTED_NOTICE = 'The workflow run started.';

/** One run: each step's status, output and error; approve/reject where the run waits on the user. */
export function RunPage(props: {
  run: RunShape;
  workflowName: string;
  temporalUrl: string | null;
  viewerIsInitiator: boolean;
  /** The approval waited on: context for the approver, and why this viewer may not decide. */
  approval: {
    step: string;
    initiator: string;
    next: { name: string; type: string; text: string } | null;
    refusal: string | null;
  } | null;
  /** The run's own audit entries (its queries), for admins; null for members. */
  audit: AuditRow[] | null;
  /** By step id: why that query step's writes run at least once (automation/delivery.ts). */
  deliveryNotes?: Record<string, string>;
  csrf: string;
  notice?: string | undefined;
  error?: string | undefined;
}) {
  const r = props.run;
  const base = `/runs/${r.workflow_id}/${r.id}`;
  return (
    <section>
      <p class="muted">
        <a href="/runs">Workflow runs</a> /
      </p>
      <h1>
        {props.workflowName} <Badge status={r.status} />
      </h1>
      <Flash notice={props.notice} error={props.error} />
      <p class="muted">
        {r.id} · {r.trigger} · started {when(r.started_at)}
        {r.finished_at ? ` · ended ${when(r.finished_at)}` : ''}
        {props.temporalUrl ? (
          <>
            {' · '}
            <a href={props.temporalUrl} rel="noreferrer">
              Open in Temporal UI
            </a>
          </>
        ) : null}
      </p>
      {r.inputs_hidden ? (
        <p class="warning small" data-inputs="hidden">
          {r.inputs_hidden}
        </p>
      ) : (
        <p>
          Inputs: <code>{JSON.stringify(r.inputs)}</code>
        </p>
      )}
      {r.status === 'failed' &&
      props.viewerIsInitiator &&
      (r.steps ?? []).some((s) => s.status === 'failed') ? (
        <form method="post" action={`${base}/retry`} class="inline">
          <Csrf token={props.csrf} />
          <button type="submit" class="small">
            Retry from step {(r.steps ?? []).find((s) => s.status === 'failed')?.name}
          </button>
        </form>
      ) : null}
      {r.status !== 'running' && r.status !== 'waiting_for_approval' && !r.inputs_hidden ? (
        <details>
          <summary>Run again with the same or edited inputs</summary>
          <form method="post" action={`${base}/rerun`} class="card wide">
            <Csrf token={props.csrf} />
            {Object.entries(r.inputs).map(([key, value]) => (
              <>
                <label for={`rerun-${key}`}>{key}</label>
                <input id={`rerun-${key}`} name={`input.${key}`} value={String(value)} />
              </>
            ))}
            <button type="submit">Start a new run</button>
          </form>
        </details>
      ) : null}
      {r.status === 'running' || r.status === 'waiting_for_approval' ? (
        <PostButton action={`${base}/cancel`} csrf={props.csrf} label="Cancel run" />
      ) : null}
      {r.status === 'running' || r.status === 'waiting_for_approval' ? (
        // Live status without a framework: while the run is live the page reloads itself (every
        // 2 s while steps run, 5 s while it waits on people) unless someone is typing in it.
        <script src="/assets/live-reload.js" data-interval={r.status === 'running' ? '2000' : '5000'} />
      ) : null}
      {r.error ? <p class="warning error">{r.error}</p> : null}
      {r.steps === null ? (
        <p class="muted">Step details are not available (the run is not reachable right now).</p>
      ) : null}
      {(r.steps ?? []).map((s) => (
        <article class="card wide">
          <h2>
            {s.name} <Badge status={s.status} /> <span class="muted">{s.type}</span>
          </h2>
          {s.error ? <p class="error">{s.error}</p> : null}
          {props.deliveryNotes?.[s.id] ? <p class="muted small">{props.deliveryNotes[s.id]}</p> : null}
          {s.type === 'approval' && s.status === 'waiting' && props.approval ? (
            <div class="approval-context">
              <p>
                Started by <strong>{props.approval.initiator}</strong>
                {r.inputs_hidden ? (
                  '.'
                ) : (
                  <>
                    {' '}
                    with inputs <code>{JSON.stringify(r.inputs)}</code>.
                  </>
                )}
              </p>
              {props.approval.next ? (
                <>
                  <p class="muted">
                    If approved, next: <strong>{props.approval.next.name}</strong> ({props.approval.next.type}
                    )
                  </p>
                  <pre>{props.approval.next.text}</pre>
                </>
              ) : (
                <p class="muted">If approved, the run ends here.</p>
              )}
            </div>
          ) : null}
          {s.type === 'approval' && s.status === 'waiting' ? (
            props.viewerIsInitiator || props.approval?.refusal ? (
              <p class="muted">
                {props.viewerIsInitiator
                  ? 'Waiting for approval by someone other than you (you started this run).'
                  : `Waiting for approval: ${props.approval?.refusal}.`}
              </p>
            ) : (
              <form method="post" action={`${base}/approvals`}>
                <Csrf token={props.csrf} />
                <label for={`comment-${s.id}`}>Comment (optional)</label>
                <input id={`comment-${s.id}`} name="comment" maxlength={2000} />
                <div class="actions">
                  <button type="submit" name="decision" value="approve">
                    Approve
                  </button>
                  <button type="submit" name="decision" value="reject" class="bad">
                    Reject
                  </button>
                </div>
              </form>
            )
          ) : null}
          <StepOutput output={s.output} />
          {s.started_at ? (
            <p class="muted small">
              {when(s.started_at)}
              {s.finished_at ? ` → ${when(s.finished_at)} (${seconds(s.started_at, s.finished_at)})` : ''}
            </p>
          ) : null}
        </article>
      ))}
      {props.audit && props.audit.length > 0 ? (
        <>
          <h2>Audit entries of this run</h2>
          <ul class="plain card">
            {props.audit.map((e) => (
              <li>
                <Badge status={e.outcome} /> <span class="muted small">{when(e.occurred_at)}</span>{' '}
                <code>{e.statement}</code>
                {e.rows_returned !== null ? <span class="muted"> · {e.rows_returned} row(s)</span> : null}
                {e.detail ? <span class="muted"> · {e.detail}</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {r.approvals && r.approvals.length > 0 ? (
        <>
          <h2>Approvals</h2>
          <ul class="plain card">
            {r.approvals.map((a) => (
              <li>
                <Badge status={a.decision} /> {a.email} on {a.step} · {when(a.at)}
                {a.comment ? ` — ${a.comment}` : ''}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

function StepOutput(props: { output: unknown }) {
  const o = props.output;
  if (o === null || o === undefined) return null;
  const q = o as { columns?: unknown; rows?: unknown; redacted?: unknown };
  // governance/protection/run-output.ts: the reader's policy differs from the one the output was computed under.
  const note = typeof q.redacted === 'string' ? <p class="warning">{q.redacted}</p> : null;
  const c = o as { result?: unknown; ended_run_as?: unknown; command?: unknown; num_rows?: unknown };
  if (c.result === false && typeof c.ended_run_as === 'string')
    return (
      <p class="notice">
        The condition was false, so the run ended here as <strong>{c.ended_run_as}</strong>, as the step is
        set to.
      </p>
    );
  // A write returns no columns: say how many rows it changed rather than "No rows".
  if (Array.isArray(q.columns) && q.columns.length === 0 && typeof c.num_rows === 'number')
    return (
      <p class="notice">
        {typeof c.command === 'string' ? c.command : 'Statement'} — {c.num_rows} row(s) affected
      </p>
    );
  if (Array.isArray(q.columns) && Array.isArray(q.rows))
    return (
      <>
        {note}
        <ResultTable columns={q.columns.map(cellText)} rows={q.rows as unknown[][]} />
      </>
    );
  if (note) return note;
  return <pre>{JSON.stringify(o, null, 2)}</pre>;
}

function seconds(from: string, to: string): string {
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

// While someone types (a comment on an approval) the reload waits for them, then tries again.
