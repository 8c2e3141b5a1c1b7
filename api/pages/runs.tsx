import type { presentRun } from '../../automation/present.ts';
import type { WorkflowRunRow } from '../../store/workflow-runs.ts';
import { Badge, Csrf, cellText, Flash, ResultTable, when } from './components.tsx';

export function RunsPage(props: { runs: WorkflowRunRow[]; names: Record<string, string> }) {
  return (
    <section>
      <h1>Workflow runs</h1>
      {props.runs.length === 0 ? <p class="muted">No workflow has run yet.</p> : null}
      {props.runs.length > 0 ? (
        <div class="scroll">
          <table>
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
                  <td>
                    <a href={`/runs/${r.workflow_id}/${r.id}`}>
                      {props.names[r.workflow_id] ?? r.workflow_id}
                    </a>
                    <div class="muted">{r.id}</div>
                  </td>
                  <td>
                    <Badge status={r.status} />
                  </td>
                  <td>{r.trigger}</td>
                  <td>{when(r.started_at)}</td>
                  <td>
                    <code>{JSON.stringify(r.inputs)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

type RunShape = ReturnType<typeof presentRun>;

/** One run: each step's status, output and error; approve/reject where the run waits on the user. */
export function RunPage(props: {
  run: RunShape;
  workflowName: string;
  temporalUrl: string | null;
  viewerIsInitiator: boolean;
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
      <p>
        Inputs: <code>{JSON.stringify(r.inputs)}</code>
      </p>
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
          {s.type === 'approval' && s.status === 'waiting' ? (
            props.viewerIsInitiator ? (
              <p class="muted">Waiting for approval by someone other than you (you started this run).</p>
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
        </article>
      ))}
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
  // automation/redact.ts: the reader's policy differs from the one the output was computed under.
  const note = typeof q.redacted === 'string' ? <p class="warning">{q.redacted}</p> : null;
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
