/** One printed line of `npm run bench`: a figure, measured against its baseline in the same run. */
export interface BenchRow {
  /** What is measured, e.g. "check-connection (postgres)". */
  figure: string;
  /** The measured value with its unit, e.g. "0.41 ms p50". */
  value: string;
  /** The baseline measured in the same run, e.g. "bare driver 0.35 ms p50", or "" when none applies. */
  baseline: string;
  /** The comparison, e.g. "+0.06 ms" or "ratio 1.12", or the target it is held against. */
  comparison: string;
}

/** A benchmark module in bench/: `export default { name, run }`. */
export interface Bench {
  name: string;
  run(): Promise<BenchRow[]>;
}

/** Percentile of a sorted copy of samples (nearest-rank). */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Times `fn` `n` times after `warmup` runs; returns per-call milliseconds. */
export async function sample(
  n: number,
  fn: () => Promise<unknown>,
  warmup = Math.min(50, n),
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Samples each function `n` times, one call of each in turn and rotating who goes first, so
 * drift in a shared server hits every function alike. `warmup` calls of each come first.
 */
export async function interleaved(
  n: number,
  fns: Array<() => Promise<unknown>>,
  warmup: number,
): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn();
  const out = fns.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < fns.length; k++) {
      const j = (i + k) % fns.length;
      const t0 = performance.now();
      await fns[j]!();
      out[j]!.push(performance.now() - t0);
    }
  }
  return out;
}
