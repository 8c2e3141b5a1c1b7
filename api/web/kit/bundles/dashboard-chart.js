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
  const bar = data.kind === 'bar';
  // Bars stand at 0, 1, 2, … with the x values as labels, grouped side by side per row.
  const labels = data.x.labels ?? (bar ? data.x.values.map(String) : null);
  const xs = labels ? labels.map((_, i) => i) : data.x.values;
  const n = data.series.length;
  const share = 0.8 / n;
  const barsOf = (k) =>
    uPlot.paths.bars({
      disp: {
        x0: { unit: 1, values: (u) => u.data[0].map((x) => x - 0.4 + k * share) },
        size: { unit: 1, values: () => [share] },
      },
    });
  const width = () => Math.max(200, canvas.clientWidth || figure.clientWidth);
  const opts = {
    width: width(),
    height: 240,
    legend: { show: n > 1, live: false },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, ...(labels ? { range: (_u, min, max) => [min - 0.5, max + 0.5] } : {}) },
      y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        label: data.x.name,
        ...(labels
          ? {
              // One label every so many bars, so that they do not overlap on a phone.
              splits: (u) => {
                const step = Math.max(
                  1,
                  Math.ceil(xs.length / Math.max(1, u.bbox.width / devicePixelRatio / 70)),
                );
                return xs.filter((i) => i % step === 0);
              },
              values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
            }
          : {}),
      },
      {},
    ],
    series: [
      { label: data.x.name },
      ...data.series.map((s, k) => {
        const colour = COLOURS[k % COLOURS.length];
        return {
          label: s.name,
          stroke: colour,
          width: bar ? 1 : 2,
          ...(bar ? { paths: barsOf(k), fill: `${colour}cc`, points: { show: false } } : {}),
        };
      }),
    ],
  };
  const chart = new uPlot(opts, [xs, ...data.series.map((s) => s.values)], canvas);
  new ResizeObserver(() => chart.setSize({ width: width(), height: 240 })).observe(figure);
}
