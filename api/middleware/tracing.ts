import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { inServerSpan } from '../../core/tracing.ts';
import type { AppEnv } from '../env.ts';

/**
 * One server span per request (installed only while tracing is on), the parent of every span
 * the request makes. A W3C `traceparent` on the request makes it a child of the caller's span
 * (W3C Trace Context §3.2); named by the route pattern (OpenTelemetry HTTP semantic conventions),
 * never the path or query string, which carry ids and OAuth codes.
 */
export function httpTracing(): MiddlewareHandler<AppEnv> {
  return async function traceRequest(c, next) {
    await inServerSpan(
      (name) => c.req.header(name),
      async () => {
        await next();
        const route = routePath(c);
        return {
          name: `${c.req.method} ${route}`,
          attributes: {
            'http.request.method': c.req.method,
            'http.route': route,
            'http.response.status_code': c.res.status,
          },
          failed: c.res.status >= 500,
        };
      },
    );
  };
}
