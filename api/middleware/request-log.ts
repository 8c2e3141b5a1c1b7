import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from '../../core/logger.ts';
import { httpRequestDuration } from '../../core/metrics.ts';
import type { Principal } from '../../identity/principal.ts';
import type { AppEnv } from '../env.ts';

/**
 * One JSON log line per request. It names the route pattern and the principal's id, never
 * the query string (OAuth codes and states travel there), headers, or bodies.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async function logRequest(c, next) {
    const started = performance.now();
    const requestId = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.header('x-request-id', requestId);
    await next();
    noteRequest(logger, {
      requestId,
      method: c.req.method,
      route: routePath(c),
      status: c.res.status,
      started,
      principal: c.get('principal'),
    });
  };
}

/** The caller's request id when it sent one (cut to 64 characters), else a new one. */
export function requestIdOf(sent: string | null | undefined): string {
  return sent?.slice(0, 64) || randomUUID();
}

/** What a request's log line and duration metric are made of. */
export interface AnsweredRequest {
  requestId: string;
  method: string;
  route: string;
  status: number;
  /** performance.now() when the request arrived. */
  started: number;
  principal: Principal | undefined;
}

/**
 * The request's duration metric and log line. Also written by the MCP door (api/mcp/door.ts),
 * which answers its calls in front of the router: its lines are the router's lines.
 */
export function noteRequest(logger: Logger, r: AnsweredRequest): void {
  const ms = performance.now() - r.started;
  httpRequestDuration.observe({ method: r.method, route: r.route, status: String(r.status) }, ms / 1000);
  const principal = r.principal;
  logger.info(
    {
      requestId: r.requestId,
      method: r.method,
      route: r.route,
      status: r.status,
      ms: Math.round(ms * 10) / 10,
      ...(principal
        ? {
            principal: principal.userId,
            ...(principal.via === 'api_key' ? { api_key: principal.credentialId } : {}),
          }
        : {}),
    },
    'request',
  );
}
