import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { publicJwks } from '../../identity/signing-keys.ts';
import type { AppEnv } from '../env.ts';

/** The service's public signing keys (RFC 7517), for receivers of x-service-jwt and OAuth tokens. */
export function jwksRoutes(deps: Pick<Deps, 'sql' | 'keyring'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/.well-known/jwks.json', async (c) => {
    c.header('cache-control', 'public, max-age=300');
    return c.json(await publicJwks(deps));
  });
  return app;
}
