import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../../core/errors.ts';
import type { AppEnv } from '../env.ts';

/** Sign-in, OAuth and account forms carry a few fields; nothing legitimate comes near this. */
export const SMALL_BODY_BYTES = 8 * 1024;
/** Definitions (workflows with many steps, databases with certificates, dashboards). */
export const API_BODY_BYTES = 1024 * 1024;

/** Endpoints anyone can reach without an account, or whose forms are small. */
const SMALL = [
  /^\/login(\/|$)/,
  /^\/logout$/,
  /^\/oauth\//,
  /^\/settings\//,
  /^\/set-password$/,
  /^\/people(\/|$)/,
  /^\/organization(\/|$)/,
];

/**
 * Every request body has a ceiling, checked before anything parses it: a declared
 * Content-Length over the limit is refused at once, and a chunked body is counted as it streams
 * and cut off at the limit. /mcp applies its own limit (api/mcp/index.ts).
 */
export function bodyLimits(): MiddlewareHandler<AppEnv> {
  const small = limited(SMALL_BODY_BYTES);
  const api = limited(API_BODY_BYTES);
  return async function limitBody(c, next) {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();
    const path = c.req.path;
    if (path === '/mcp') return next();
    return (SMALL.some((r) => r.test(path)) ? small : api)(c, next);
  };
}

function limited(maxSize: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize,
    onError: (c) => {
      // The rest of the body is never read: the connection cannot carry another request.
      c.header('connection', 'close');
      throw new AppError(
        413,
        'payload-too-large',
        'Payload too large',
        `the request body exceeds ${maxSize} bytes`,
      );
    },
  });
}
