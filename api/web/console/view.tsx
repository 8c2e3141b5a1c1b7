import type { DatabaseWithCredentials } from '../../../registry/databases.ts';
import type { HistoryLine, SavedQueryRow } from '../../../store/workspace.ts';
import type { ConsoleRun } from '../../../workspace/console.ts';
import { Badge, Csrf, Flash, ResultTable, when } from '../kit/components.tsx';

/** The CodeMirror language each engine's SQL is completed and highlighted with. */
const DIALECT: Record<string, string> = {
  postgres: 'postgres',
  mysql: 'mysql',
  clickhouse: 'standard',
  sqlserver: 'mssql',
  oracle: 'plsql',
};

export interface ConsoleProps {
  databases: DatabaseWithCredentials[];
  csrf: string;
  /** `db_…/crd_…` of the chosen credential. */
  target: string;
  statement: string;
  outcome: ConsoleRun | null;
  history: HistoryLine[];
  /** The history holds more lines than `history` (the page shows the newest until asked). */
  moreHistory: boolean;
  historySearch: string;
  saved: SavedQueryRow[];
  userId: string;
  isAdmin: boolean;
  notice?: string | undefined;
  error?: string | undefined;
}

/**
 * The query console: a database and credential the person may use, a statement (a plain textarea
 * that assets/sql-editor.js turns into an editor with completion; without scripts the form works
 * as it is), the governed result (redacted by the person's policy) or the review it waits for,
 * and the person's history and saved queries.
 */
export function ConsolePage(props: ConsoleProps) {
  const chosen = props.target || firstTarget(props.databases);
  const reviews = reviewsOf(props.databases, chosen);
  return (
    <section class="console">
      <h1>Query console</h1>
      <Flash notice={props.notice} error={props.error} />
      {props.databases.length === 0 ? (
        <p class="muted">No database is available to you. An admin can register one or grant you access.</p>
      ) : (
        <div class="console-grid">
          <aside class="schema-browser card" aria-labelledby="schema-heading" id="schema-browser">
            <h2 id="schema-heading">Schema</h2>
            <p class="muted small" id="schema-status">
              Tables and columns appear here when scripts run; click a name to insert it.
            </p>
            <input
              type="search"
              id="schema-filter"
              placeholder="Filter tables"
              aria-label="Filter tables"
              hidden
            />
            <ul id="schema-tree" class="schema-tree" />
          </aside>
          <div class="console-main">
            <form method="post" action="/console" class="card wide" id="console-form">
              <Csrf token={props.csrf} />
              <label for="credential">Database and credential</label>
              <select id="credential" name="credential" required>
                {props.databases.map(({ db, credentials }) => (
                  <optgroup label={`${db.name} (${db.adapter})`}>
                    {credentials.map((c) => (
                      <option
                        value={`${db.id}/${c.id}`}
                        selected={`${db.id}/${c.id}` === chosen}
                        data-dialect={DIALECT[db.adapter] ?? 'standard'}
                        data-reviews={String(c.reviews_required)}
                      >
                        {db.name} as {c.username}
                        {c.reviews_required > 0 ? ` — needs ${c.reviews_required} review(s)` : ''}
                        {c.default_credential ? ' (default)' : ''}
                      </option>
                    ))}
                  </optgroup>
                ))}
              </select>
              <label for="statement">SQL</label>
              <textarea
                id="statement"
                name="statement"
                required
                spellcheck={false}
                aria-describedby="run-hint"
              >
                {props.statement}
              </textarea>
              <p class="muted small" id="run-hint">
                Ctrl+Enter (⌘+Enter on a Mac) runs the statement, or only the selected text.
              </p>
              <p class="warning" id="review-note" hidden={reviews === 0}>
                <Badge status="pending" /> Needs review: this credential requires{' '}
                <span id="review-count">{reviews}</span> approval(s). Running submits a query request; nothing
                runs until reviewers approve.
              </p>
              <label for="justification">
                Why you need it (for the reviewers; some credentials require it)
              </label>
              <input id="justification" name="justification" maxlength={2000} autocomplete="off" />
              <div class="actions">
                <button type="submit" id="run-button">
                  {reviews > 0 ? 'Submit for review' : 'Run query'}
                </button>
              </div>
            </form>
            {props.outcome ? <Outcome outcome={props.outcome} /> : null}
            <SaveForm csrf={props.csrf} target={chosen} statement={props.statement} />
          </div>
        </div>
      )}
      <div class="console-lists">
        <SavedList saved={props.saved} userId={props.userId} isAdmin={props.isAdmin} csrf={props.csrf} />
        <HistoryList history={props.history} more={props.moreHistory} search={props.historySearch} />
      </div>
      {/* The editor (CodeMirror, bundled by bin/build.js); the form above works without it. */}
      <script src="/assets/sql-editor.js" type="module" />
    </section>
  );
}

function firstTarget(dbs: DatabaseWithCredentials[]): string {
  for (const { db, credentials } of dbs) {
    const c = credentials.find((x) => x.default_credential) ?? credentials[0];
    if (c) return `${db.id}/${c.id}`;
  }
  return '';
}

function reviewsOf(dbs: DatabaseWithCredentials[], target: string): number {
  const [dbId, credId] = target.split('/');
  const db = dbs.find((d) => d.db.id === dbId);
  return db?.credentials.find((c) => c.id === credId)?.reviews_required ?? 0;
}

function Outcome(props: { outcome: ConsoleRun }) {
  const o = props.outcome;
  const took = <span class="muted small">{formatDuration(o.durationMs)}</span>;
  if (o.status === 'error')
    return (
      <div id="outcome" tabindex={-1}>
        <p class="warning error" role="alert">
          {o.message} {took}
        </p>
      </div>
    );
  if (o.status === 'pending_review') {
    return (
      <div id="outcome" tabindex={-1}>
        <p class="warning" role="status">
          <Badge status="pending" /> This credential needs {o.reviewsRequired} review
          {o.reviewsRequired === 1 ? '' : 's'}. Your query is waiting as request{' '}
          <a href={`/reviews#${o.requestId}`}>{o.requestId}</a>; run it from Reviews once approved.
        </p>
      </div>
    );
  }
  const r = o.result;
  return (
    <div id="outcome" tabindex={-1}>
      <h2>
        Result <span class="muted small result-took">{formatDuration(o.durationMs)}</span>
      </h2>
      {r.columns.length > 0 ? (
        <ResultTable
          columns={r.columns}
          rows={r.rows}
          truncated={r.truncated}
          messages={r.messages}
          marks={o.marks}
        />
      ) : (
        <p class="notice" role="status" id="rows-affected">
          {r.command || 'Done'}: {r.num_rows} row{r.num_rows === 1 ? '' : 's'} affected
        </p>
      )}
    </div>
  );
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function SaveForm(props: { csrf: string; target: string; statement: string }) {
  return (
    <details class="card wide save-query">
      <summary>Save this query</summary>
      <form method="post" action="/console/saved" id="save-form">
        <Csrf token={props.csrf} />
        <input type="hidden" name="credential" value={props.target} id="save-credential" />
        <label for="save-name">Name</label>
        <input id="save-name" name="name" required maxlength={200} autocomplete="off" />
        <label for="save-statement">SQL</label>
        <textarea id="save-statement" name="statement" required spellcheck={false} class="short">
          {props.statement}
        </textarea>
        <label class="check">
          <input type="checkbox" name="shared" value="1" id="save-shared" /> Share with my organization
        </label>
        <button type="submit">Save query</button>
      </form>
    </details>
  );
}

function SavedList(props: { saved: SavedQueryRow[]; userId: string; isAdmin: boolean; csrf: string }) {
  return (
    <section class="card" aria-labelledby="saved-heading">
      <h2 id="saved-heading">Saved queries</h2>
      {props.saved.length === 0 ? (
        <p class="muted">Nothing saved yet. Write a query and use “Save this query”.</p>
      ) : (
        <ul class="plain query-list">
          {props.saved.map((s) => (
            <li>
              <a href={`/console?saved=${encodeURIComponent(s.id)}`}>{s.name}</a>{' '}
              {s.shared ? <span class="badge">shared</span> : null}{' '}
              {s.owner_id !== props.userId ? <span class="muted small">by {s.owner_email}</span> : null}
              <code class="small">{preview(s.statement)}</code>
              {s.owner_id === props.userId || props.isAdmin ? (
                <form method="post" action={`/console/saved/${s.id}/delete`} class="inline">
                  <Csrf token={props.csrf} />
                  <button type="submit" class="small quiet" aria-label={`Delete saved query ${s.name}`}>
                    Delete
                  </button>
                </form>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function HistoryList(props: { history: HistoryLine[]; more: boolean; search: string }) {
  return (
    <section class="card" aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <form method="get" action="/console" class="inline">
        <label for="history-search" class="sr-only">
          Search history
        </label>
        <input type="search" id="history-search" name="q" value={props.search} placeholder="Search history" />
        <button type="submit" class="small">
          Search
        </button>
      </form>
      {props.history.length === 0 ? (
        <p class="muted">
          {props.search ? 'Nothing in your history matches.' : 'Statements you run appear here.'}
        </p>
      ) : (
        <ul class="plain query-list" id="history-list">
          {props.history.map((h) => {
            const text = preview(h.statement);
            return (
              <li>
                <a href={`/console?history=${encodeURIComponent(h.id)}`} aria-label={`Load: ${text}`}>
                  <code>{text}</code>
                </a>{' '}
                <span class="muted small">
                  {when(h.ran_at)} · {h.outcome.replaceAll('_', ' ')}
                  {h.rows_count !== null ? ` · ${h.rows_count} row(s)` : ''}
                  {h.duration_ms !== null ? ` · ${formatDuration(h.duration_ms)}` : ''}
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {props.more ? (
        <p>
          <a
            href={`/console?all_history=1${props.search ? `&q=${encodeURIComponent(props.search)}` : ''}#history-heading`}
          >
            Show the whole history
          </a>
        </p>
      ) : null}
    </section>
  );
}

function preview(statement: string): string {
  const one = statement.replace(/\s+/g, ' ').trim();
  return one.length > 120 ? `${one.slice(0, 120)}…` : one;
}
