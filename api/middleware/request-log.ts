import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from '../../core/logger.ts';
import { httpRequestDuration } from '../../core/metrics.ts';
import type { AppEnv } from '../env.ts';

/**
 * One JSON log line per request. It names the route pattern and the principal's id, never
 * the query string (OAuth codes and states travel there), headers, or bodies.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function logRequest(c, next) {
    const started = performance.now();
    const requestId = c.req.header('x-request-id')?.slice(0, 64) || randomUUID();
    c.set('requestId', requestId);
    c.header('x-request-id', requestId);
    await next();
    const seconds = (performance.now() - started) / 1000;
    httpRequestDuration.observe(
      { method: c.req.method, route: routePath(c), status: String(c.res.status) },
      seconds,
    );
    const principal = c.get('principal');
    logger.info(
      {
        requestId,
        method: c.req.method,
        route: routePath(c),
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        ...(principal
          ? {
              principal: principal.userId,
              ...(principal.via === 'api_key' ? { api_key: principal.credentialId } : {}),
            }
          : {}),
      },
      'request',
    );
  };
}
