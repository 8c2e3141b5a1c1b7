import type { Context } from 'hono';
import type { AppError, FieldError } from '../core/errors.ts';

export * from '../core/errors.ts';

/** RFC 9457 problem details body. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
}

export function problemFor(err: AppError, baseUrl: string, instance?: string): Problem {
  return {
    type: `${baseUrl}/problems/${err.slug}`,
    title: err.title,
    status: err.status,
    detail: err.detail,
    ...(instance ? { instance } : {}),
    ...(err.errors ? { errors: err.errors } : {}),
  };
}

/** Writes a problem response (RFC 9457 §3: media type application/problem+json). */
export function problemResponse(c: Context, err: AppError, baseUrl: string): Response {
  const body = problemFor(err, baseUrl, new URL(c.req.url).pathname);
  return c.body(JSON.stringify(body), err.status, { 'content-type': 'application/problem+json' });
}
