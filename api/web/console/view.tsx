import type { QueryResult } from '../../../adapters/types.ts';
import type { DatabaseWithCredentials } from '../../../registry/databases.ts';
import { Badge, Csrf, ResultTable } from '../kit/components.tsx';

export type ConsoleOutcome =
  | { status: 'executed'; result: QueryResult }
  | { status: 'pending_review'; requestId: string; reviewsRequired: number }
  | { status: 'error'; message: string };

/**
 * The query console: a database and credential the user may use, a statement, and the
 * governed result (redacted by the user's policy) or the review it waits for.
 */
export function ConsolePage(props: {
  databases: DatabaseWithCredentials[];
  csrf: string;
  credentialId: string;
  statement: string;
  outcome: ConsoleOutcome | null;
}) {
  return (
    <section>
      <h1>Query console</h1>
      {props.databases.length === 0 ? (
        <p class="muted">No database is available to you. An admin can register one or grant you access.</p>
      ) : (
        <form method="post" action="/console" class="card wide">
          <Csrf token={props.csrf} />
          <label for="credential">Database and credential</label>
          <select id="credential" name="credential" required>
            {props.databases.map(({ db, credentials }) => (
              <optgroup label={`${db.name} (${db.adapter})`}>
                {credentials.map((c) => (
                  <option value={`${db.id}/${c.id}`} selected={c.id === props.credentialId}>
                    {db.name} as {c.username}
                    {c.reviews_required > 0 ? ` — needs ${c.reviews_required} review(s)` : ''}
                    {c.default_credential ? ' (default)' : ''}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
          <label for="statement">SQL</label>
          <textarea id="statement" name="statement" required spellcheck={false}>
            {props.statement}
          </textarea>
          <label for="justification">Why you need it (for the reviewers; some credentials require it)</label>
          <input id="justification" name="justification" maxlength={2000} autocomplete="off" />
          <button type="submit">Run query</button>
        </form>
      )}
      {props.outcome ? <Outcome outcome={props.outcome} /> : null}
    </section>
  );
}

function Outcome(props: { outcome: ConsoleOutcome }) {
  const o = props.outcome;
  if (o.status === 'error') return <p class="warning error">{o.message}</p>;
  if (o.status === 'pending_review') {
    return (
      <p class="warning">
        <Badge status="pending" /> This credential needs {o.reviewsRequired} review
        {o.reviewsRequired === 1 ? '' : 's'}. Your query is waiting as request{' '}
        <a href={`/reviews#${o.requestId}`}>{o.requestId}</a>; run it from Reviews once approved.
      </p>
    );
  }
  return (
    <>
      <h2>Result</h2>
      {o.result.columns.length > 0 ? (
        <ResultTable
          columns={o.result.columns}
          rows={o.result.rows}
          truncated={o.result.truncated}
          messages={o.result.messages}
        />
      ) : (
        <p class="notice">
          {o.result.command} — {o.result.num_rows} row(s)
        </p>
      )}
    </>
  );
}
