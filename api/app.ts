import { Hono } from 'hono';
import type { Deps } from '../core/deps.ts';
import { isStoreUnavailable } from '../core/store-outage.ts';
import { tracingActive } from '../core/tracing.ts';
import type { AppEnv } from './env.ts';
import { AppError, internalError, notFound, problemResponse, storeUnavailable } from './errors.ts';
import { mcpRoutes } from './mcp/index.ts';
import { accessSettled } from './middleware/access-settled.ts';
import { sessionCookieName } from './middleware/auth.ts';
import { bodyLimits } from './middleware/body-limit.ts';
import { strictCsp } from './middleware/csp.ts';
import { requestLog } from './middleware/request-log.ts';
import { safetyHeaders } from './middleware/secure-headers.ts';
import { httpTracing } from './middleware/tracing.ts';
import { oauthRoutes } from './oauth/index.ts';
import { mountOpenApi } from './openapi.ts';
import { agentRoutes } from './rest/agents.ts';
import { aiClientRoutes } from './rest/ai-clients.ts';
import { apiKeyRoutes } from './rest/api-keys.ts';
import { auditRoutes } from './rest/audit.ts';
import { dashboardRoutes } from './rest/dashboards.ts';
import { dataProtectionRoutes } from './rest/data-protection.ts';
import { databaseRoutes } from './rest/databases.ts';
import { grantRoutes } from './rest/grants.ts';
import { healthRoutes } from './rest/health.ts';
import { jwksRoutes } from './rest/jwks.ts';
import { meRoutes } from './rest/me.ts';
import { metricsRoutes } from './rest/metrics.ts';
import { queryRequestRoutes } from './rest/query-requests.ts';
import { ssoAdminRoutes } from './rest/sso.ts';
import { temporalCodecRoutes } from './rest/temporal-codec.ts';
import { tokenRoutes } from './rest/tokens.ts';
import { trackerWebhookRoutes } from './rest/tracker-webhook.ts';
import { userRoutes } from './rest/users.ts';
import { workflowRoutes } from './rest/workflows.ts';
import { workspaceRoutes } from './rest/workspace.ts';
import { pageRoutes } from './web/index.tsx';
import { assetRoutes } from './web/kit/assets-route.ts';
import { forgotPasswordRoutes } from './web/sign-in/forgot.tsx';
import { sessionRoutes } from './web/sign-in/session.tsx';
import { setPasswordRoutes } from './web/sign-in/set-password.tsx';
import { ssoRoutes } from './web/sign-in/sso.tsx';

/** The whole HTTP surface: one router per resource, one error mapper. */
/** What a client is told to wait before retrying while the store is unreachable. */
const STORE_RETRY_AFTER_SECONDS = 5;

export function createApp(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Outermost, so the request's log line and everything it does run inside its span.
  if (tracingActive()) app.use('*', httpTracing());
  // A middleware added here does not see plain MCP tool calls: the door in front of the router
  // answers them (api/mcp/door.ts). Decide there whether it must; test/mcp/door.test.ts lists
  // these and fails on a new one.
  app.use('*', requestLog(deps.logger));
  app.use('*', safetyHeaders());
  app.use('*', strictCsp());
  const sessionCookie = sessionCookieName(deps.config.baseUrl);
  app.use('*', async function sessionCookieOfDeployment(c, next) {
    c.set('sessionCookie', sessionCookie);
    await next();
  });
  app.use('*', bodyLimits());
  app.use('*', accessSettled(deps));

  app.route('/', assetRoutes());
  app.route('/', healthRoutes(deps));
  app.route('/', metricsRoutes(deps));
  app.route('/', sessionRoutes(deps));
  app.route('/', setPasswordRoutes(deps));
  app.route('/', forgotPasswordRoutes(deps));
  app.route('/api/v1/me', meRoutes(deps));
  app.route('/api/v1/api-keys', apiKeyRoutes(deps));
  app.route('/api/v1/agents', agentRoutes(deps));
  app.route('/api/v1/tokens', tokenRoutes(deps));
  app.route('/api/v1/users', userRoutes(deps));
  app.route('/api/v1/ai-clients', aiClientRoutes(deps));
  app.route('/api/v1/desk/databases', databaseRoutes(deps));
  app.route('/api/v1/desk/databases', grantRoutes(deps));
  app.route('/api/v1', workspaceRoutes(deps));
  app.route('/api/v1/desk/query-requests', queryRequestRoutes(deps));
  app.route('/api/v1/audit', auditRoutes(deps));
  app.route('/api/v1/desk/databases/:id/policies', dataProtectionRoutes(deps));
  app.route('/', oauthRoutes(deps));
  app.route('/', mcpRoutes(deps));
  app.route('/', ssoRoutes(deps));
  app.route('/', ssoAdminRoutes(deps));
  app.route('/api/v1/workflows', workflowRoutes(deps));
  app.route('/api/v1/integrations/tracker', trackerWebhookRoutes(deps));
  app.route('/', jwksRoutes(deps));
  app.route('/temporal/codec', temporalCodecRoutes(deps));
  app.route('/v1/dashboards', dashboardRoutes(deps));
  app.route('/', pageRoutes(deps));
  mountOpenApi(app, deps.config);

  app.notFound((c) =>
    problemResponse(
      c,
      notFound(`no route for ${c.req.method} ${new URL(c.req.url).pathname}`),
      deps.config.baseUrl,
    ),
  );
  app.onError((err, c) => {
    if (err instanceof AppError) {
      const challenge = (err as AppError & { challenge?: string }).challenge;
      if (challenge) c.header('www-authenticate', challenge);
      return problemResponse(c, err, deps.config.baseUrl);
    }
    if (isStoreUnavailable(err)) {
      deps.logger.warn(
        { requestId: c.get('requestId'), code: (err as { code?: string }).code },
        'store unavailable',
      );
      c.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
      return problemResponse(c, storeUnavailable(), deps.config.baseUrl);
    }
    // The internal reason is logged (without the request body), never sent.
    deps.logger.error(
      { err: { name: err.name, message: err.message, stack: err.stack }, requestId: c.get('requestId') },
      'unhandled error',
    );
    return problemResponse(c, internalError(), deps.config.baseUrl);
  });
  return app;
}
