// The JSON Schema tools/list shows for a tool, generated from the valibot schema its calls are
// validated with, so the two cannot drift apart.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

export interface ToolInputSchema {
  type: 'object';
  properties: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

const cache = new WeakMap<object, ToolInputSchema>();

export function toolInputSchema(schema: v.GenericSchema): ToolInputSchema {
  let out = cache.get(schema);
  if (!out) {
    // `$schema` names a draft; MCP 2025-11-25 tools take the object schema itself.
    const { $schema: _draft, ...json } = toJsonSchema(schema, { errorMode: 'ignore' }) as ToolInputSchema & {
      $schema?: string;
    };
    out = { ...json, type: 'object', properties: json.properties ?? {} };
    cache.set(schema, out);
  }
  return out;
}
