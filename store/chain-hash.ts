// The audit chain's hash formula, in the store because the store computes it when it appends
// (store/audit-head.ts) as well as in SQL (audit_append); audit/chain.ts names it for verifiers.
import { createHash } from 'node:crypto';

/** sha256(prev_hash ':' seq ':' body), hex: what the store computes when it appends. */
export function entryHash(prevHash: string, seq: bigint | number, body: string): string {
  return createHash('sha256').update(`${prevHash}:${seq}:${body}`, 'utf8').digest('hex');
}
