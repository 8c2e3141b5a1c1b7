import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import type { AppEnv } from '../env.ts';
import { authorizeRoutes } from './authorize.tsx';
import { connectionRoutes } from './connections.tsx';
import { metadataRoutes } from './metadata.ts';
import { registerRoutes } from './register.ts';
import { tokenRoutes } from './token.ts';

/** The OAuth 2.1 authorization server (api/oauth/README.md): metadata, registration, authorize, token, revoke. */
export function oauthRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route('/', metadataRoutes(deps));
  app.route('/', registerRoutes(deps));
  app.route('/', authorizeRoutes(deps));
  app.route('/', tokenRoutes(deps));
  app.route('/', connectionRoutes(deps));
  return app;
}
