import type { Context } from 'hono';
import type * as v from 'valibot';
import { fieldErrors, parseInput } from '../core/input.ts';
import { badRequest } from './errors.ts';

export { fieldErrors };

/** Parses a value with a schema or throws a 422 naming each bad field (core/input.ts). */
export const parseWith = parseInput;

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
