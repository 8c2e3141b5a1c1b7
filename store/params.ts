import type { ParamValue } from '../adapters/types.ts';

/**
 * A bound parameter as stored in JSON (query requests, audit entries). JSON has no bigint, date
 * or bytes, so those travel tagged and come back as the same JavaScript value.
 */
export type StoredParam =
  | string
  | number
  | boolean
  | null
  | { $type: 'bigint' | 'date' | 'bytes'; value: string };

/** Encodes parameters for a jsonb column; `decodeParams` gives the same values back. */
export function encodeParams(params: readonly ParamValue[]): StoredParam[] {
  return params.map((p) => {
    if (typeof p === 'bigint') return { $type: 'bigint', value: p.toString() };
    if (p instanceof Date) return { $type: 'date', value: p.toISOString() };
    if (p instanceof Uint8Array) return { $type: 'bytes', value: Buffer.from(p).toString('base64') };
    return p;
  });
}

/** The inverse of `encodeParams`; anything else stored there is a corrupt row. */
export function decodeParams(stored: unknown): ParamValue[] {
  if (!Array.isArray(stored)) throw new Error('stored parameters are not an array');
  return stored.map((p: unknown): ParamValue => {
    if (p === null || typeof p === 'string' || typeof p === 'number' || typeof p === 'boolean') return p;
    const tagged = p as { $type?: unknown; value?: unknown };
    if (typeof tagged.value === 'string') {
      if (tagged.$type === 'bigint') return BigInt(tagged.value);
      if (tagged.$type === 'date') return new Date(tagged.value);
      if (tagged.$type === 'bytes') return new Uint8Array(Buffer.from(tagged.value, 'base64'));
    }
    throw new Error('a stored parameter has an unknown shape');
  });
}
