/** HTTP statuses the application errors map to. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 502 | 503;

/** One field problem of a 422 (DESIGN.md Conventions: `errors: [{path, message}]`). */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * The closed set of application errors. Each maps to one status and problem type; the
 * `detail` is written for the caller and never carries a secret or an internal reason.
 */
export class AppError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export const badRequest = (detail: string) => new AppError(400, 'bad-request', 'Bad request', detail);
export const unauthorized = (detail = 'missing or invalid credentials') =>
  new AppError(401, 'unauthorized', 'Unauthorized', detail);
export const forbidden = (detail = 'you may not do this') =>
  new AppError(403, 'forbidden', 'Forbidden', detail);
export const notFound = (detail = 'not found') => new AppError(404, 'not-found', 'Not found', detail);
export const conflict = (detail: string) => new AppError(409, 'conflict', 'Conflict', detail);
export const validationFailed = (errors: FieldError[]) =>
  new AppError(
    422,
    'validation',
    'Validation failed',
    errors.map((e) => `${e.path || '(body)'}: ${e.message}`).join('; '),
    errors,
  );
export const tooManyRequests = (detail = 'too many requests') =>
  new AppError(429, 'rate-limited', 'Too many requests', detail);

export const internalError = (detail = 'the server could not complete the request') =>
  new AppError(500, 'internal', 'Internal error', detail);

/** The store cannot be reached: the caller may retry (the answer carries Retry-After). */
export const storeUnavailable = () =>
  new AppError(
    503,
    'store-unavailable',
    'Service unavailable',
    'the service store cannot be reached; try again shortly',
  );
