// The write preview on a request card: risk level and why, the exact count, and the rows before
// and after, as the reader's own rights and policy let them be read (governance/preview/).
import type { WritePreview } from '../../../governance/preview/index.ts';
import { ResultTable, when } from '../kit/components.tsx';

const LEVELS: Record<string, string> = {
  ddl: 'DDL',
  no_where: 'no WHERE',
  large: 'large',
  ordinary: 'ordinary',
};

/**
 * `level` is the request's own assessed level, shown above the card (reviews/view.tsx): the
 * preview repeats its risk only when the reader's count puts it at another level.
 */
export function PreviewCard(props: {
  p: WritePreview;
  level?: string | null;
  /** Cells the reader's policy masks or hides are labelled, not shown as data or NULL. */
  marks?: Array<string | null> | undefined;
}) {
  const { p } = props;
  const marked = props.marks ? { marks: props.marks } : {};
  const risky = p.risk.level !== 'ordinary';
  const same = props.level === p.risk.level;
  return (
    <section class="preview" aria-label="Write preview">
      {same ? null : (
        <p>
          <span class={`badge ${risky ? 'bad' : ''}`} data-risk={p.risk.level}>
            risk in this preview: {LEVELS[p.risk.level] ?? p.risk.level}
          </span>{' '}
          <span class="muted">{p.risk.why}</span>
        </p>
      )}
      <p>
        <strong data-risk={same ? p.risk.level : undefined}>Preview</strong>{' '}
        {p.count !== null ? (
          <span data-count={String(p.count)}>
            {p.verb ?? 'the write'} would touch <strong>{p.count}</strong> row{p.count === 1 ? '' : 's'}
          </span>
        ) : null}{' '}
        <span class="muted small">computed {when(new Date(p.computed_at))}, nothing was written</span>
      </p>
      {p.note ? <p class="muted">{p.note}</p> : null}
      {p.before.length > 0 ? (
        <>
          <p class="muted small">
            Before{p.count !== null && p.count > p.before.length ? ` (first ${p.before.length})` : ''}
          </p>
          <ResultTable columns={p.columns} rows={p.before} {...marked} />
        </>
      ) : null}
      {p.after.length > 0 ? (
        <>
          <p class="muted small">After{p.assigned.length ? ` (${p.assigned.join(', ')} changed)` : ''}</p>
          <ResultTable columns={p.columns} rows={p.after} {...marked} />
        </>
      ) : null}
      {p.undo ? (
        <p class="muted" data-undo={p.undo.available ? 'available' : 'unavailable'}>
          {p.undo.available
            ? `Undo: the rows it touches are kept before it runs (up to ${p.undo.max_rows}), so it can be undone.`
            : p.undo.note}
        </p>
      ) : null}
      {p.definition.map((d) => (
        <p>
          Current definition of <code>{d.relation}</code>:{' '}
          <code>{d.columns.map((c) => `${c.name} ${c.type}`).join(', ')}</code>
        </p>
      ))}
    </section>
  );
}
