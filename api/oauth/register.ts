import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import type { Deps } from '../../config/runtime.ts';
import { registerClient } from '../../identity/oauth-clients.ts';
import { OAuthError } from '../../identity/oauth-errors.ts';
import type { AppEnv } from '../env.ts';
import { tooManyRequests } from '../errors.ts';
import { openCors } from './cors.ts';
import { NO_STORE, oauthErrorResponse } from './errors.ts';

/** POST /oauth/register: RFC 7591 dynamic client registration (open, rate-limited). */
export function registerRoutes(deps: Pick<Deps, 'sql' | 'logger'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('/oauth/register', openCors());
  app.post('/oauth/register', async (c) => {
    let metadata: unknown;
    try {
      metadata = await c.req.json();
    } catch {
      metadata = null;
    }
    try {
      const address = getConnInfo(c).remote.address ?? 'unknown';
      const result = await registerClient(deps.sql, { metadata, address });
      if (result === 'rate_limited') throw tooManyRequests('too many client registrations; try again later');
      // RFC 7591 §3.2.1: 201 Created; the body may carry a client secret, so it is not cached.
      return c.json(result, 201, NO_STORE);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(c, err, deps.logger);
      throw err;
    }
  });
  return app;
}
