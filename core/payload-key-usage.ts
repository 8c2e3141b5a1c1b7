// Key rotation of Temporal payloads: which keys the open runs' histories still need. A key may be
// dropped from COUNTERSIGN_ENCRYPTION_OLD_KEYS once no open run has a payload sealed with it (closed
// runs' histories stay encrypted with it; keep it as long as those must stay readable).
import type { Client } from '@temporalio/client';
import type { Keyring } from '../store/crypto.ts';
import { KEY_ID, PAYLOAD_KEY_INFO } from './payload-codec.ts';

export interface KeyUsage {
  currentKeyId: string;
  openRuns: number;
  /** Open runs with at least one payload sealed by a key other than the current one. */
  runsOnOldKeys: number;
  /** Their Temporal workflow ids. */
  oldKeyRunIds: string[];
  /** Open runs with at least one payload written before encryption. */
  runsWithPlaintext: number;
  /** Payloads per key id across the open runs' histories (`plaintext` for unencrypted ones). */
  payloadsByKey: Record<string, number>;
  /** Key ids found in histories that the ring does not hold (those payloads cannot be decoded). */
  unknownKeyIds: string[];
}

/** Reads every open workflow's history in the namespace with a client that does not decode. */
export async function payloadKeyUsage(client: Client, keyring: Keyring): Promise<KeyUsage> {
  const { currentId, keys } = keyring.hkdfKeys(PAYLOAD_KEY_INFO);
  const usage: KeyUsage = {
    currentKeyId: currentId,
    openRuns: 0,
    runsOnOldKeys: 0,
    oldKeyRunIds: [],
    runsWithPlaintext: 0,
    payloadsByKey: {},
    unknownKeyIds: [],
  };
  for await (const wf of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
    usage.openRuns++;
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const ids: string[] = [];
    collectKeyIds(history, ids);
    for (const id of ids) usage.payloadsByKey[id] = (usage.payloadsByKey[id] ?? 0) + 1;
    if (ids.some((id) => id !== currentId && id !== 'plaintext')) {
      usage.runsOnOldKeys++;
      usage.oldKeyRunIds.push(wf.workflowId);
    }
    if (ids.includes('plaintext')) usage.runsWithPlaintext++;
  }
  usage.unknownKeyIds = Object.keys(usage.payloadsByKey).filter((id) => id !== 'plaintext' && !keys.has(id));
  return usage;
}

/** Every payload of a history (a protobuf object tree): its key id, or `plaintext`. */
function collectKeyIds(node: unknown, out: string[]): void {
  if (typeof node !== 'object' || node === null || node instanceof Uint8Array) return;
  if (Array.isArray(node)) {
    for (const item of node) collectKeyIds(item, out);
    return;
  }
  const record = node as Record<string, unknown>;
  const metadata = record.metadata;
  if (isPayloadMetadata(metadata) && 'data' in record) {
    const id = metadata[KEY_ID];
    out.push(id ? Buffer.from(id).toString('utf8') : 'plaintext');
    return;
  }
  for (const value of Object.values(record)) collectKeyIds(value, out);
}

function isPayloadMetadata(m: unknown): m is Record<string, Uint8Array> {
  return (
    typeof m === 'object' &&
    m !== null &&
    !Array.isArray(m) &&
    'encoding' in m &&
    (m as Record<string, unknown>).encoding instanceof Uint8Array
  );
}
