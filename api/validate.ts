import type { Context } from 'hono';
import * as v from 'valibot';
import { badRequest, type FieldError, validationFailed } from './errors.ts';

/** Maps valibot issues to field errors; the path is dotted (`credentials.0.username`). */
export function fieldErrors(issues: v.BaseIssue<unknown>[]): FieldError[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message }));
}

/** Parses a value with a schema or throws a 422 naming each bad field. */
export function parseWith<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw validationFailed(fieldErrors(result.issues));
  return result.output;
}

/** Reads a JSON body (400 when it is not JSON) and validates it (422 naming the fields). */
export async function jsonBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw badRequest('the request body must be JSON');
  }
  return parseWith(schema, raw);
}
