import { describe, expect, it } from 'vitest';
import { chartOf, describeChart } from './chart.ts';

describe('chartOf', () => {
  it('charts the numeric columns by the first one, numeric text included', () => {
    const c = chartOf(
      'bar',
      ['name', 'amount', 'note', 'total'],
      [
        ['Ada', 10, 'x', '1.5'],
        ['Grace', null, 'y', '2'],
      ],
    );
    expect(c).toEqual({
      kind: 'bar',
      x: { name: 'name', values: [0, 1], labels: ['Ada', 'Grace'] },
      series: [
        { name: 'amount', values: [10, null] },
        { name: 'total', values: [1.5, 2] },
      ],
    });
    expect(describeChart(c!)).toBe(
      'Bar chart of amount, total by name, 2 points; the table below lists the values.',
    );
  });

  it('uses a numeric first column as the x axis of a line chart', () => {
    expect(
      chartOf(
        'line',
        ['day', 'n'],
        [
          [1, 5],
          ['2', 7],
        ],
      )?.x,
    ).toEqual({
      name: 'day',
      values: [1, 2],
      labels: null,
    });
  });

  it('draws nothing for a table view, no rows, or no numeric column beside the first', () => {
    expect(chartOf('table', ['a', 'b'], [['x', 1]])).toBeNull();
    expect(chartOf(undefined, ['a', 'b'], [['x', 1]])).toBeNull();
    expect(chartOf('line', ['a', 'b'], [])).toBeNull();
    expect(chartOf('line', ['a', 'b'], [['x', 'y']])).toBeNull();
    expect(chartOf('line', ['a', 'b'], [['x', null]])).toBeNull();
    expect(chartOf('line', ['n'], [[1]])).toBeNull();
  });
});
