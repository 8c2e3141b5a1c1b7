// The audit hash chain (governance/README.md "Hash chain"). Each entry's hash covers the previous
// entry's hash, its own sequence number and the canonical JSON of every other column, so changing,
// removing or reordering an entry breaks every hash after it.
import type { AuditBodyColumn, AuditRow } from '../store/audit.ts';

/** The hash before an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * The columns an entry's hash covers, besides seq and prev_hash: store/audit.ts
 * AUDIT_BODY_COLUMNS, with the time as ISO text; `event` and `subject` only on non-query events
 * (a query entry's body is what it was before events existed), but for a query entry written
 * inside a trace, whose subject holds its trace_id (audit/events.ts).
 */
export type AuditBody = { [K in Exclude<AuditBodyColumn, 'occurred_at'>]: AuditRow[K] } & {
  occurred_at: string;
  event?: string;
  subject?: unknown;
};

/**
 * JSON with object keys sorted at every level, so the same values always give the same text,
 * whichever order a driver or jsonb hands keys back in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/**
 * The text the store hashes for an entry, and stores it from: the append (store/audit-writer.ts,
 * and audit_append in store/migrations/0020_audit_batch.sql) fills every column from this JSON by
 * name, so it must hold every stored column but seq, prev_hash and hash (a missing `event` reads
 * as 'query').
 */
export function bodyText(body: AuditBody): string {
  return canonicalJson(body);
}

/** sha256(prev_hash ':' seq ':' body), hex: the store's formula (store/chain-hash.ts). */
export { entryHash } from '../store/chain-hash.ts';
