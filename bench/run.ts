// `npm run bench`: runs every benchmark module in bench/ (or those named on the command line)
// one after another, and prints one table. Each figure is measured against its baseline in the
// same run, so the comparison holds on whatever machine runs it.
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Bench, BenchRow } from './report.ts';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = new Set(process.argv.slice(2));
const files = (await readdir(dir))
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'report.ts'].includes(f) && !f.endsWith('.test.ts'))
  .filter((f) => wanted.size === 0 || wanted.has(f.replace(/\.ts$/, '')))
  .sort();

const rows: Array<BenchRow & { bench: string }> = [];
let failed = 0;
for (const file of files) {
  const bench = (await import(`./${file}`)).default as Bench;
  process.stderr.write(`bench: ${bench.name}…\n`);
  try {
    for (const row of await bench.run()) rows.push({ bench: bench.name, ...row });
  } catch (err) {
    failed++;
    rows.push({
      bench: bench.name,
      figure: 'FAILED',
      value: err instanceof Error ? err.message : String(err),
      baseline: '',
      comparison: '',
    });
  }
}

const header = ['bench', 'figure', 'value', 'baseline', 'comparison'] as const;
const widths = header.map((h) => Math.max(h.length, ...rows.map((r) => String(r[h]).length)));
const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(header.map((h) => String(r[h]))));
process.exit(failed > 0 ? 1 : 0);
