// The credential of the internal relay link between Countersign processes (agent/README.md
// "Replicas"). It is not a stored secret: every process of a deployment holds
// COUNTERSIGN_ENCRYPTION_KEY, so each derives the same token as HMAC-SHA256(key, label). Why this
// is enough:
// - a party without the encryption key cannot compute it (HMAC is a PRF), and the encryption key
//   already unlocks every stored database password, so the relay grants nothing the key holder
//   could not take anyway;
// - the token is one-way: seeing it (a proxy log, say) does not reveal the encryption key, and the
//   label pins it to this one use;
// - it is compared in constant time over fixed-length digests, so timing says nothing about it;
// - during a key rotation a process still accepts tokens derived from its old keys.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../store/crypto.ts';

const LABEL = 'countersign/agent-relay/v1';

/** The request header naming the tunnel session the caller read from the store. */
export const RELAY_SESSION_HEADER = 'x-countersign-relay-session';

/** Path of the relay endpoint for `agentId` (served by API processes only). */
export function relayPath(agentId: string): string {
  return `/internal/agents/${encodeURIComponent(agentId)}/relay`;
}

/** The agent id of a relay path, or null when `path` is not one. */
export function parseRelayPath(path: string): string | null {
  const m = /^\/internal\/agents\/([^/]+)\/relay$/.exec(path);
  return m ? decodeURIComponent(m[1]!) : null;
}

/** The token this process presents (derived from the current key). */
export function relayToken(keyring: Keyring): string {
  return keyring.deriveKey(LABEL).toString('base64url');
}

/** Whether an `Authorization` header value carries a relay token of this deployment. */
export function relayTokenMatches(keyring: Keyring, header: string | undefined): boolean {
  const m = /^Bearer ([A-Za-z0-9_-]{1,128})$/.exec(header ?? '');
  if (!m) return false;
  // Digests first: timingSafeEqual needs equal lengths, and hashing hides the presented length.
  const given = createHash('sha256').update(m[1]!).digest();
  let ok = false;
  for (const key of keyring.deriveKeys(LABEL)) {
    const expected = createHash('sha256').update(key.toString('base64url')).digest();
    ok = timingSafeEqual(given, expected) || ok;
  }
  return ok;
}
