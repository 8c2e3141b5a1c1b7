import type { MiddlewareHandler } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { isStoreUnavailable } from '../../core/store-outage.ts';
import { settleAccess } from '../../governance/access.ts';
import type { AppEnv } from '../env.ts';

/**
 * A request that may have changed who can reach what answers only once every process's access
 * cache has dropped what the change made stale (store/access-cache.ts rule 3): whoever sees the
 * answer to a revocation can no longer be let in by a cached decision. It costs one small store
 * round trip on requests that can write.
 */
export function accessSettled(deps: Pick<Deps, 'sql' | 'logger'>): MiddlewareHandler<AppEnv> {
  return async function settleAccessChanges(c, next) {
    await next();
    if (!mayChangeAccess(c.req.method, c.res.status, c.get('accessUnchanged') === true)) return;
    // The store could not be reached (answered 503, api/app.ts): a barrier through the same
    // unreachable store would only hold the answer for its whole timeout.
    if (c.error && isStoreUnavailable(c.error)) return;
    try {
      await settleAccess(deps.sql);
    } catch (err) {
      // The change is committed either way; each process still drops its cache when the change's
      // own notification reaches it. Say so rather than turn the answer into an error.
      deps.logger.error(
        { err: { name: (err as Error).name, message: (err as Error).message } },
        'access cache: the barrier after a change failed',
      );
    }
  };
}

/**
 * Marks a route that only runs, reviews or follows queries (MCP tools, the query requests API, the
 * console's run, the review page's actions): none changes a person, a grant, a role, a
 * credential, a key or a policy, so its answer need not wait for the caches. A route without the
 * mark waits: forgetting it costs a round trip, never a stale decision.
 */
export function queryOnly(): MiddlewareHandler<{ Variables: { accessUnchanged?: boolean } }> {
  return async function markQueryOnly(c, next) {
    c.set('accessUnchanged', true);
    await next();
  };
}

export function mayChangeAccess(method: string, status: number, unchanged: boolean): boolean {
  // A refusal changed nothing (bad input, no credentials, not allowed, not found, too many tries).
  if (status >= 400 && status < 500) return false;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  return !unchanged;
}
