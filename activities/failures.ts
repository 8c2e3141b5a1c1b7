// How activity errors reach the interpreter: errors that retrying cannot fix become non-retryable
// ApplicationFailures with a type the retry policies name (workflows/activity-options.ts); the rest
// are rethrown and retried. Messages are for people and never carry secrets.
import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../core/errors.ts';
import { ExprError } from '../expr/index.ts';
import { QueryDeniedError, QueryFailedError } from '../governance/query.ts';
import { ChatRefusedError } from '../integrations/chat.ts';

export function nonRetryable(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Maps a known error to its failure; unknown errors pass through (retried by policy). */
export function asFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ExprError) return nonRetryable('ValidationError', err.message);
  if (err instanceof QueryFailedError) {
    // A statement the database refused will be refused again; a lost connection or timeout may not.
    return err.kind === 'query' ? nonRetryable('QueryError', err.message) : err;
  }
  if (err instanceof QueryDeniedError) return nonRetryable('QueryDenied', err.message);
  if (err instanceof ChatRefusedError) return nonRetryable('ChatError', err.message);
  if (err instanceof AppError && err.status === 404) return nonRetryable('NotFound', err.detail);
  if (err instanceof AppError && err.status < 500) return nonRetryable('ValidationError', err.detail);
  return err;
}
