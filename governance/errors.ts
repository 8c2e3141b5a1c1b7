import { AppError } from '../core/errors.ts';

/** A query the database ran and refused or failed; the message is the server's own, without secrets. */
export class QueryFailedError extends AppError {
  constructor(
    readonly kind: 'connection' | 'query' | 'timeout',
    message: string,
  ) {
    super(422, 'query-failed', 'Query failed', message);
  }
}

/** A governance rule refused the query before it reached the database. */
export class QueryDeniedError extends AppError {
  constructor(reason: string) {
    super(403, 'query-denied', 'Query denied', reason);
  }
}

/** "an executed query request", "a pending query request": a request named by its status. */
export function aRequest(status: string): string {
  return `${/^[aeiou]/.test(status) ? 'an' : 'a'} ${status} query request`;
}
