// Fixed-window failure counters in the store, so every API replica sees the same counts.
import type { Tx } from './db.ts';

export interface BucketState {
  hits: number;
  /** When the window the hits belong to ends. */
  resetsAt: Date;
  /** When the last hit was counted. */
  lastHitAt: Date;
}

/** The live counts of these buckets (windows that ended count as empty). */
export async function readBuckets(
  sql: Tx,
  buckets: string[],
  windowSeconds: number,
): Promise<Map<string, BucketState>> {
  if (buckets.length === 0) return new Map();
  const rows = await sql<{ bucket: string; hits: number; resets_at: Date; last_hit_at: Date }[]>`
    select bucket, hits, window_started_at + make_interval(secs => ${windowSeconds}) as resets_at,
           coalesce(last_hit_at, window_started_at) as last_hit_at
    from rate_limits
    where bucket in ${sql(buckets)}
      and window_started_at > now() - make_interval(secs => ${windowSeconds})`;
  return new Map(
    rows.map((r) => [r.bucket, { hits: r.hits, resetsAt: r.resets_at, lastHitAt: r.last_hit_at }]),
  );
}

/** Counts one more hit in each bucket, starting a new window where the old one ended. */
export async function hitBuckets(sql: Tx, buckets: string[], windowSeconds: number): Promise<void> {
  for (const bucket of buckets) {
    await sql`
      insert into rate_limits (bucket, window_started_at, hits, last_hit_at) values (${bucket}, now(), 1, now())
      on conflict (bucket) do update set
        last_hit_at = now(),
        hits = case when rate_limits.window_started_at <= now() - make_interval(secs => ${windowSeconds})
                    then 1 else rate_limits.hits + 1 end,
        window_started_at = case when rate_limits.window_started_at <= now() - make_interval(secs => ${windowSeconds})
                    then now() else rate_limits.window_started_at end`;
  }
}

export async function clearBuckets(sql: Tx, buckets: string[]): Promise<void> {
  if (buckets.length === 0) return;
  await sql`delete from rate_limits where bucket in ${sql(buckets)}`;
}

/** Drops windows that ended long ago (the maintenance sweep calls it). */
export async function pruneBuckets(sql: Tx, olderThanSeconds: number): Promise<void> {
  await sql`delete from rate_limits where window_started_at < now() - make_interval(secs => ${olderThanSeconds})`;
}
