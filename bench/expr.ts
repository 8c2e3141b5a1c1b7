// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// Expression language throughput: a pre-parsed step condition and a pre-parsed SQL template, each
// against the same logic hand-coded in plain JavaScript, in the same run (DESIGN.md, Conventions).
import {
  type EvalContext,
  evaluateCondition,
  parseExpression,
  parseTemplate,
  renderSql,
} from '../expr/index.ts';
import type { Bench, BenchRow } from './report.ts';

const CONDITION = '${step.q.output.num_rows} > 5 && ${approved}';
const SQL = 'SELECT * FROM orders WHERE customer = ${customer} AND total > ${step.q.output.num_rows}';
/** The target for the pre-parsed condition, on one core: far above what any workflow evaluates. */
const TARGET_PER_SECOND = 1_000_000;

// Sixteen contexts, rotated, so neither side can fold the result into a constant.
const CONTEXTS: EvalContext[] = Array.from({ length: 16 }, (_, i) => ({
  inputs: { approved: i % 3 !== 0, customer: `c_${i}` },
  steps: {
    q: {
      status: 'succeeded',
      output: { num_rows: i, rows: [], columns: [], command: 'SELECT', messages: [] },
    },
  },
}));

interface HandContext {
  inputs: { approved: boolean; customer: string };
  steps: { q: { output: { num_rows: number } } };
}
const HAND = CONTEXTS as unknown as HandContext[];

/** Calls per second of `fn(i)`: the median of five timed rounds after a warm-up. */
function perSecond(fn: (i: number) => number, iterations: number): number {
  let sink = 0;
  for (let i = 0; i < iterations / 4; i++) sink += fn(i);
  const rates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) sink += fn(i);
    rates.push(iterations / ((performance.now() - t0) / 1000));
  }
  if (sink === -1) console.log('unreachable'); // keeps `sink` alive
  return rates.sort((a, b) => a - b)[2]!;
}

const millions = (n: number): string => `${(n / 1e6).toFixed(2)} M/s`;

async function run(): Promise<BenchRow[]> {
  const condition = parseExpression(CONDITION);
  const exprRate = perSecond((i) => (evaluateCondition(condition, CONTEXTS[i & 15]!) ? 1 : 0), 2_000_000);
  const handRate = perSecond((i) => {
    const ctx = HAND[i & 15]!;
    return ctx.steps.q.output.num_rows > 5 && ctx.inputs.approved ? 1 : 0;
  }, 2_000_000);
  const parseRate = perSecond((i) => (evaluateCondition(CONDITION, CONTEXTS[i & 15]!) ? 1 : 0), 200_000);

  const template = parseTemplate(SQL);
  const sqlRate = perSecond((i) => renderSql(template, CONTEXTS[i & 15]!, 'postgres').params.length, 500_000);
  const handSqlRate = perSecond((i) => {
    const ctx = HAND[i & 15]!;
    const params: unknown[] = [ctx.inputs.customer, ctx.steps.q.output.num_rows];
    const text = 'SELECT * FROM orders WHERE customer = $1 AND total > $2';
    return text.length + params.length;
  }, 500_000);

  const met = exprRate >= TARGET_PER_SECOND ? 'met' : 'NOT met';
  return [
    {
      figure: `expr condition, pre-parsed: ${CONDITION}`,
      value: millions(exprRate),
      baseline: `hand-coded JS ${millions(handRate)}`,
      comparison: `ratio ${(exprRate / handRate).toFixed(3)}; target > ${millions(TARGET_PER_SECOND)} ${met}`,
    },
    {
      figure: 'expr condition, parsed on every call',
      value: millions(parseRate),
      baseline: `pre-parsed ${millions(exprRate)}`,
      comparison: `ratio ${(parseRate / exprRate).toFixed(3)}`,
    },
    {
      figure: 'renderSql, pre-parsed template (postgres, 2 params)',
      value: millions(sqlRate),
      baseline: `hand-coded JS ${millions(handSqlRate)}`,
      comparison: `ratio ${(sqlRate / handSqlRate).toFixed(3)}`,
    },
  ];
}

const bench: Bench = { name: 'expr', run };
export default bench;
