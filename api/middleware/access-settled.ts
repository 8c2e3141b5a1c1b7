import type { MiddlewareHandler } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { accessBarrier } from '../../store/access-cache.ts';
import type { AppEnv } from '../env.ts';

/**
 * A request that may have changed who can reach what answers only once this process's access
 * cache has dropped what the change made stale (store/access-cache.ts rule 3): whoever sees the
 * answer to a revocation can no longer be let in by a cached decision. It costs one small store
 * round trip on requests that can write.
 */
export function accessSettled(deps: Pick<Deps, 'sql'>): MiddlewareHandler<AppEnv> {
  return async function settleAccessChanges(c, next) {
    await next();
    if (mayChangeAccess(c.req.method, c.req.path)) await accessBarrier(deps.sql);
  };
}

function mayChangeAccess(method: string, path: string): boolean {
  // Signing in with SSO creates people and sets their role from the identity provider's groups.
  if (path === '/login/sso/callback') return true;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  // MCP tools run and follow queries; none changes a grant, a role, a credential or a policy.
  return path !== '/mcp';
}
