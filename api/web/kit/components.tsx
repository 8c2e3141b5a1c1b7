import type { Child } from 'hono/jsx';

/** Every page form carries the session's CSRF token (checked by the page routes). */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** A one-line message after a redirect (`?notice=` / `?error=`); text only, escaped by JSX. */
/**
 * A one-button form that POSTs to `action` with the CSRF token: the shape of every revoke, end,
 * retry and check action on the pages (no script needed, works on a phone).
 */
export function PostButton(props: {
  action: string;
  csrf: string;
  label: string;
  tone?: 'bad' | 'quiet' | 'plain';
}) {
  const tone = props.tone ?? 'bad';
  return (
    <form method="post" action={props.action} class="inline">
      <Csrf token={props.csrf} />
      <button type="submit" class={tone === 'plain' ? 'small' : `small ${tone}`}>
        {props.label}
      </button>
    </form>
  );
}

export function Flash(props: { notice?: string | undefined; error?: string | undefined }) {
  return (
    <>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      {props.error ? (
        <p class="warning error" role="alert">
          {props.error}
        </p>
      ) : null}
    </>
  );
}

const TONE: Record<string, string> = {
  succeeded: 'ok',
  executed: 'ok',
  allowed: 'ok',
  approved: 'ok',
  approve: 'ok',
  failed: 'bad',
  denied: 'bad',
  rejected: 'bad',
  reject: 'bad',
  canceled: 'bad',
  expired: 'bad',
  pending: 'warn',
  waiting: 'warn',
  waiting_for_approval: 'warn',
  running: 'warn',
  executing: 'warn',
};

export function Badge(props: { status: string }) {
  return <span class={`badge ${TONE[props.status] ?? ''}`}>{props.status.replaceAll('_', ' ')}</span>;
}

/** `2026-01-02 15:04 UTC`: short and unambiguous on a phone. */
export function when(d: Date | string | null | undefined): string {
  if (!d) return '—';
  const iso = typeof d === 'string' ? d : d.toISOString();
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** A cell as text: null shows as a dim dash, objects as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The text a masked value reads as (governance/protection/rules.ts MASK). */
const MASK_TEXT = '****';

/**
 * A cell the viewer's policy protected: a hidden column's NULL says "hidden", a masked value
 * keeps its mask text and says "masked", so neither passes for data (or for a real NULL).
 */
function ProtectedCell(props: { mark: string; value: unknown }) {
  if (props.mark === 'hide')
    return (
      <td
        class="protected"
        data-protection="hidden"
        data-export=""
        title="Hidden by your data-protection policy"
      >
        hidden
      </td>
    );
  const label = props.mark === 'hash' ? 'hashed' : 'masked';
  return (
    <td
      class="protected"
      data-protection={label}
      data-export={cellText(props.value)}
      title={`${label} by your data-protection policy`}
    >
      {cellText(props.value)} <span class="tag">{label}</span>
    </td>
  );
}

/** Rows drawn at first; the rest are revealed a page at a time (the page stays light). */
export const RESULT_PAGE_ROWS = 200;

/** A cell for reading: timestamps as UTC to the second, long text cut (the full value in the tooltip). */
export function cellDisplay(v: unknown): { text: string; numeric: boolean } {
  if (v instanceof Date)
    return { text: `${v.toISOString().slice(0, 19).replace('T', ' ')} UTC`, numeric: false };
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/.test(v))
    return { text: `${new Date(v).toISOString().slice(0, 19).replace('T', ' ')} UTC`, numeric: false };
  return { text: cellText(v), numeric: typeof v === 'number' || typeof v === 'bigint' };
}

/**
 * A query result as a table; `rowEnd` adds cells (row action buttons) to each row. The header
 * stays in view while the rows scroll; numbers are right-aligned; past RESULT_PAGE_ROWS the rest
 * are revealed on demand; Copy and CSV take exactly the cells shown — what the viewer may see.
 */
export function ResultTable(props: {
  columns: string[];
  rows: unknown[][];
  truncated?: boolean;
  rowEnd?: (row: unknown[]) => Child;
  rowEndLabel?: string;
  /** What the server and data protection said about the result (hidden columns, warnings). */
  messages?: string[];
  /** Per column, what the viewer's policy does to it: such cells are labelled, never shown as data or NULL. */
  marks?: Array<string | null>;
}) {
  const hiddenRows = Math.max(0, props.rows.length - RESULT_PAGE_ROWS);
  return (
    <div class="result">
      <div class="scroll tall">
        <table class="result-table" data-cols={String(props.columns.length)}>
          <thead>
            <tr>
              {props.columns.map((c) => (
                <th scope="col">{c}</th>
              ))}
              {props.rowEnd ? <th scope="col">{props.rowEndLabel ?? ''}</th> : null}
            </tr>
          </thead>
          <tbody>
            {props.rows.length === 0 ? (
              <tr>
                <td colspan={props.columns.length + (props.rowEnd ? 1 : 0)} class="muted">
                  No rows.
                </td>
              </tr>
            ) : null}
            {props.rows.map((row, i) => (
              <tr hidden={i >= RESULT_PAGE_ROWS}>
                {row.map((v, col) => {
                  const mark = props.marks?.[col] ?? (v === MASK_TEXT ? 'mask' : null);
                  if (mark) return <ProtectedCell mark={mark} value={v} />;
                  if (v === null) return <td class="muted">null</td>;
                  const d = cellDisplay(v);
                  return (
                    <td class={d.numeric ? 'num' : ''} title={d.text.length > 60 ? d.text : undefined}>
                      {d.text}
                    </td>
                  );
                })}
                {props.rowEnd ? <td>{props.rowEnd(row)}</td> : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted result-bar">
        {props.rows.length} row{props.rows.length === 1 ? '' : 's'}
        {props.truncated ? ' (cut at the row limit)' : ''}
        {hiddenRows > 0 ? (
          <button type="button" class="small quiet" data-more={String(RESULT_PAGE_ROWS)}>
            Show {Math.min(hiddenRows, RESULT_PAGE_ROWS)} more
          </button>
        ) : null}
        {props.rows.length > 0 ? (
          <>
            <button type="button" class="small quiet" data-copy>
              Copy
            </button>
            <button type="button" class="small quiet" data-csv>
              Download CSV
            </button>
          </>
        ) : null}
      </p>
      {(props.messages ?? []).map((m) => (
        <p class="muted small result-note">{m}</p>
      ))}
      {/* The island behind the result bar (assets/result-table.js): it finds its box as its parent. */}
      <script src="/assets/result-table.js" />
    </div>
  );
}
