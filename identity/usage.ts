// Last-use stamps of credentials (OAuth grants, API keys, personal tokens), written at most once a
// minute per credential by this process. The row a request was authenticated with may come from
// the access cache (store/access-cache.ts), whose copy keeps the last_used_at it was read with;
// the stamp itself decides nothing, so writing it neither empties the cache (the tables' triggers
// leave last_used_at out) nor holds up the request.
import type { Tx } from '../store/db.ts';

const STAMP_EVERY_MS = 60_000;
const LIMIT = 10_000;

/** When this process last stamped each credential, by `<kind>:<id>`. */
const stamped = new Map<string, number>();

/**
 * Records that the credential `id` was used, unless it was within the last minute (as its row or
 * this process knows). `touch` writes the stamp; a failure is forgotten, never the request's.
 */
export function noteUse(
  sql: Tx,
  kind: string,
  id: string,
  lastUsedAt: Date | null,
  touch: (sql: Tx, id: string) => Promise<void>,
): void {
  const key = `${kind}:${id}`;
  const now = Date.now();
  const last = Math.max(lastUsedAt?.getTime() ?? 0, stamped.get(key) ?? 0);
  if (now - last <= STAMP_EVERY_MS) return;
  if (stamped.size >= LIMIT) stamped.clear();
  stamped.set(key, now);
  void touch(sql, id).catch(() => stamped.delete(key));
}
