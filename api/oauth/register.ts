import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { REGISTRATION_LIMITS, registerClient } from '../../identity/oauth-clients.ts';
import { OAuthError } from '../../identity/oauth-errors.ts';
import type { AppEnv } from '../env.ts';
import { tooManyRequests } from '../errors.ts';
import { clientAddress } from '../middleware/client-address.ts';
import { openCors } from './cors.ts';
import { NO_STORE, oauthErrorResponse } from './errors.ts';

/** POST /oauth/register: RFC 7591 dynamic client registration (open, rate-limited). */
export function registerRoutes(deps: Pick<Deps, 'sql' | 'logger' | 'config'>): Hono<AppEnv> {
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
      const address = clientAddress(c, deps.config.trustedProxies);
      const result = await registerClient(deps.sql, {
        metadata,
        address,
        perAddress: deps.config.rateLimits.registrationsPerAddress,
      });
      if (result === 'rate_limited') {
        c.header('retry-after', String(REGISTRATION_LIMITS.windowSeconds));
        throw tooManyRequests('too many client registrations; try again later');
      }
      // RFC 7591 §3.2.1: 201 Created; the body may carry a client secret, so it is not cached.
      return c.json(result, 201, NO_STORE);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(c, err, deps.logger);
      throw err;
    }
  });
  return app;
}
