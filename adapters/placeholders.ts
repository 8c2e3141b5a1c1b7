// Each engine's placeholder for a bound parameter. Kept apart from the adapters so that choosing a
// placeholder (when a statement is rendered) does not load the engine's driver (adapters/index.ts
// loads a driver on its first connection).
import { AdapterError } from './errors.ts';
import type { AdapterName, ParamValue } from './types.ts';

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** The ClickHouse type of a bound value: the `Type` in `{pN:Type}`. */
export function clickhouseType(v: ParamValue): string {
  if (v === null) return 'Nullable(String)';
  if (typeof v === 'string' || v instanceof Uint8Array) return 'String';
  if (typeof v === 'boolean') return 'Bool';
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 'Int64' : 'Float64';
  if (typeof v === 'bigint') {
    if (v >= INT64_MIN && v < -INT64_MIN) return 'Int64';
    if (v >= 0n && v <= UINT64_MAX) return 'UInt64';
    throw new AdapterError(`integer parameter out of the 64-bit range: ${v}`, 'query');
  }
  return 'DateTime';
}

/** `{pN:Type}`; bytes go as hex text through unhex(), since parameters travel in a UTF-8 URL. */
export function clickhousePlaceholder(index: number, v: ParamValue): string {
  const slot = `{p${index}:${clickhouseType(v)}}`;
  return v instanceof Uint8Array ? `unhex(${slot})` : slot;
}

/** The placeholder for the 1-based parameter `index` of each engine. */
export const PLACEHOLDERS: Record<AdapterName, (index: number, value: ParamValue) => string> = {
  postgres: (index) => `$${index}`,
  mysql: () => '?',
  clickhouse: clickhousePlaceholder,
  sqlserver: (index) => `@p${index}`,
  oracle: (index) => `:${index}`,
};
