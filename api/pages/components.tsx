import type { Child } from 'hono/jsx';

/** Every page form carries the session's CSRF token (checked by the page routes). */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** A one-line message after a redirect (`?notice=` / `?error=`); text only, escaped by JSX. */
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

/** A query result as a table; `rowEnd` adds cells (row action buttons) to each row. */
export function ResultTable(props: {
  columns: string[];
  rows: unknown[][];
  truncated?: boolean;
  rowEnd?: (row: unknown[]) => Child;
  rowEndLabel?: string;
}) {
  return (
    <>
      <div class="scroll">
        <table>
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
            {props.rows.map((row) => (
              <tr>
                {row.map((v) => (
                  <td>{v === null ? <span class="muted">null</span> : cellText(v)}</td>
                ))}
                {props.rowEnd ? <td>{props.rowEnd(row)}</td> : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        {props.rows.length} row{props.rows.length === 1 ? '' : 's'}
        {props.truncated ? ' (cut at the row limit)' : ''}
      </p>
    </>
  );
}
