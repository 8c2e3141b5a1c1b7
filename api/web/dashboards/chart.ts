// What a chart panel draws (assets/dashboard-chart.js, uPlot): the first column along the x axis
// and every other numeric column as a series. A result without a numeric column is a table only.
import type { PanelViewKind } from '../../../store/dashboards.ts';

export interface ChartData {
  kind: 'line' | 'bar';
  /** The x column's name and, when it is not numeric, its values as labels (x is then 0, 1, …). */
  x: { name: string; values: number[]; labels: string[] | null };
  series: Array<{ name: string; values: Array<number | null> }>;
}

/** Rows a chart draws at most; the table below still lists the whole result. */
const MAX_POINTS = 1000;

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** A cell as a number: numbers and numeric text (PostgreSQL sends bigint and numeric as text). */
function asNumber(v: unknown): number | null | undefined {
  if (v === null) return null;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && NUMBER.test(v.trim())) return Number(v);
  return undefined;
}

const numericColumn = (rows: unknown[][], col: number) =>
  rows.some((r) => asNumber(r[col]) !== null) && rows.every((r) => asNumber(r[col]) !== undefined);

export function chartOf(
  view: PanelViewKind | undefined,
  columns: string[],
  allRows: unknown[][],
): ChartData | null {
  if (view !== 'line' && view !== 'bar') return null;
  const rows = allRows.slice(0, MAX_POINTS);
  if (rows.length === 0 || columns.length < 2) return null;
  const ys = columns.map((_, i) => i).filter((i) => i > 0 && numericColumn(rows, i));
  if (ys.length === 0) return null;
  const xNumeric = numericColumn(rows, 0) && rows.every((r) => r[0] !== null);
  return {
    kind: view,
    x: {
      name: columns[0]!,
      values: rows.map((r, i) => (xNumeric ? (asNumber(r[0]) as number) : i)),
      labels: xNumeric ? null : rows.map((r) => (r[0] === null ? '' : String(r[0]))),
    },
    series: ys.map((i) => ({ name: columns[i]!, values: rows.map((r) => asNumber(r[i]) ?? null) })),
  };
}

/** A sentence saying what the chart shows, for people who cannot see it (WCAG 1.1.1). */
export function describeChart(c: ChartData): string {
  const what = c.series.map((s) => s.name).join(', ');
  return `${c.kind === 'line' ? 'Line' : 'Bar'} chart of ${what} by ${c.x.name}, ${c.x.values.length} point${
    c.x.values.length === 1 ? '' : 's'
  }; the table below lists the values.`;
}
