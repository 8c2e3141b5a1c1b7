// The dashboard's charts, bundled by bin/build.js into assets/dashboard-chart.js and loaded only
// by pages that draw one: uPlot over the data the server put in each figure's data-chart. The
// page stays whole without it (the table below each chart lists the same values).
// Styles: uPlot's stylesheet is adopted as a constructable stylesheet (CSSOM), which the strict
// Content-Security-Policy (style-src 'self', no inline <style>) allows.
import uPlot from 'uplot';
import css from 'uplot/dist/uPlot.min.css' with { type: 'text' };

const sheet = new CSSStyleSheet();
sheet.replaceSync(css);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

const COLOURS = ['#1f5fa8', '#b5471b', '#2d7d46', '#7a4fa3', '#8a6d00'];

for (const figure of document.querySelectorAll('[data-chart]')) draw(figure);

function draw(figure) {
  const data = JSON.parse(figure.getAttribute('data-chart'));
  const canvas = figure.querySelector('.chart-canvas');
  const labels = data.x.labels;
  const bars = data.kind === 'bar' ? uPlot.paths.bars({ size: [0.6, 64] }) : undefined;
  const width = () => Math.max(200, canvas.clientWidth || figure.clientWidth);
  const opts = {
    width: width(),
    height: 240,
    legend: { show: data.series.length > 1 },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false, ...(bars ? { distr: 2 } : {}) } },
    axes: [
      {
        label: data.x.name,
        values: labels ? (_u, splits) => splits.map((i) => labels[i] ?? '') : undefined,
      },
      {},
    ],
    series: [
      { label: data.x.name },
      ...data.series.map((s, i) => ({
        label: s.name,
        stroke: COLOURS[i % COLOURS.length],
        width: 2,
        ...(bars ? { paths: bars, fill: `${COLOURS[i % COLOURS.length]}99`, points: { show: false } } : {}),
      })),
    ],
  };
  const chart = new uPlot(opts, [data.x.values, ...data.series.map((s) => s.values)], canvas);
  new ResizeObserver(() => chart.setSize({ width: width(), height: 240 })).observe(figure);
}
