// Input checked by the domain function it guards, whichever door it came through (a JSON body,
// a page's form): one valibot schema per input, one set of field errors (RFC 9457 problem with
// `errors: [{path, message}]`, DESIGN.md Conventions).
import * as v from 'valibot';
import { type FieldError, validationFailed } from './errors.ts';

/** Maps valibot issues to field errors; the path is dotted (`credentials.0.username`). */
export function fieldErrors(issues: v.BaseIssue<unknown>[]): FieldError[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message }));
}

/** Parses a value with a schema or throws a 422 naming each bad field. */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw validationFailed(fieldErrors(result.issues));
  return result.output;
}
