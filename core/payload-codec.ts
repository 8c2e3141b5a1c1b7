// Temporal payload encryption (docs: "Temporal holds no readable protected data"). Every payload the
// SDK sends to Temporal — workflow and activity inputs and results, signals, queries, updates,
// memos, and failure messages through the failure converter's encoded attributes — passes through
// this codec, so Temporal's history and database hold only ciphertext.
//
//   metadata: encoding = binary/encrypted, encryption-key-id = <8 hex>, countersign-org = <org id>,
//             countersign-workflow = <Temporal workflow id>
//   data:     iv (12 bytes) || AES-256-GCM(original metadata and data) || tag (16 bytes)
//
// The organization and workflow id are bound as associated data, so relabelling a payload as another
// organization's or another run's makes it undecryptable (the codec endpoint decides who may read a
// payload from those labels). Payloads without this encoding pass through unchanged: histories
// written before encryption stay readable.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  DefaultFailureConverter,
  defaultPayloadConverter,
  type LoadedDataConverter,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
import type { Keyring } from '../store/crypto.ts';
import type { Tx } from '../store/db.ts';
import { orgOfTemporalWorkflow } from '../store/temporal-owners.ts';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID = 'encryption-key-id';
export const ORG = 'countersign-org';
export const WORKFLOW = 'countersign-workflow';
/** HKDF info label: the payload key is never the key that seals secrets at rest. */
export const PAYLOAD_KEY_INFO = 'countersign temporal payload codec v1';

/**
 * The failure converter with message and stack trace moved into an encoded payload (so the codec
 * encrypts them). A file, not an object: the workflow bundle and the worker load it by path.
 */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));

/** The organization a Temporal workflow id belongs to, or null when it names no run of ours. */
export type OrgOf = (workflowId: string) => Promise<string | null>;

export class PayloadDecryptError extends Error {
  constructor(reason: string) {
    super(`cannot decrypt a Temporal payload: ${reason}`);
    this.name = 'PayloadDecryptError';
  }
}

/** Who a payload belongs to, read from its (authenticated) labels. */
export interface PayloadOwner {
  keyId: string;
  orgId: string;
  workflowId: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function isEncrypted(p: Payload): boolean {
  const e = p.metadata?.encoding;
  return e !== undefined && e !== null && dec.decode(bytes(e)) === ENCRYPTED_ENCODING;
}

/**
 * A metadata value as bytes. A Schedule's stored action arguments come back to the worker with an
 * empty value as a plain array (`[]`), not a Uint8Array: read both.
 */
function bytes(v: Uint8Array | ArrayLike<number>): Uint8Array {
  return v instanceof Uint8Array ? v : Uint8Array.from(v);
}

/** The labels of an encrypted payload (not yet verified: decrypt() checks them). */
export function ownerOf(p: Payload): PayloadOwner {
  const m = p.metadata ?? {};
  const text = (k: string) => (m[k] ? dec.decode(bytes(m[k])) : '');
  return { keyId: text(KEY_ID), orgId: text(ORG), workflowId: text(WORKFLOW) };
}

export class EncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly currentId: string;
  private readonly known = new Map<string, string>();

  constructor(
    keyring: Keyring,
    private readonly orgOf: OrgOf,
  ) {
    const ring = keyring.hkdfKeys(PAYLOAD_KEY_INFO);
    this.keys = ring.keys;
    this.currentId = ring.currentId;
  }

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const workflowId = context?.workflowId ?? '';
    const orgId = workflowId ? await this.orgOfCached(workflowId) : '';
    return payloads.map((p) => this.encrypt(p, { keyId: this.currentId, orgId, workflowId }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => (isEncrypted(p) ? this.decrypt(p) : p));
  }

  /** Seals one payload for `owner` (the codec endpoint's /encode names the caller's organization). */
  encrypt(p: Payload, owner: PayloadOwner): Payload {
    const key = this.keys.get(owner.keyId);
    if (!key) throw new PayloadDecryptError('no such key');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(owner));
    const body = Buffer.concat([cipher.update(serialize(p)), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        encoding: enc.encode(ENCRYPTED_ENCODING),
        [KEY_ID]: enc.encode(owner.keyId),
        [ORG]: enc.encode(owner.orgId),
        [WORKFLOW]: enc.encode(owner.workflowId),
      },
      data: Buffer.concat([iv, body]),
    };
  }

  /** Opens one encrypted payload; a changed label, body or a key no longer configured throws. */
  decrypt(p: Payload): Payload {
    const owner = ownerOf(p);
    const key = this.keys.get(owner.keyId);
    if (!key) throw new PayloadDecryptError(`key ${owner.keyId || '(none)'} is not configured`);
    const data = Buffer.from(p.data ?? new Uint8Array());
    if (data.length < 28) throw new PayloadDecryptError('truncated payload');
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
    decipher.setAAD(aad(owner));
    decipher.setAuthTag(data.subarray(data.length - 16));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
    } catch {
      throw new PayloadDecryptError('authentication failed (tampered, relabelled or wrong key)');
    }
    return deserialize(plain);
  }

  get currentKeyId(): string {
    return this.currentId;
  }

  private async orgOfCached(workflowId: string): Promise<string> {
    const hit = this.known.get(workflowId);
    if (hit !== undefined) return hit;
    const org = await this.orgOf(workflowId);
    // Not cached when unknown: the run's row may be written after a first payload (a test's
    // ad hoc workflow never has one, and its payloads are sealed for no organization).
    if (org === null) return '';
    if (this.known.size >= 10_000) this.known.delete(this.known.keys().next().value!);
    this.known.set(workflowId, org);
    return org;
  }
}

function aad(o: PayloadOwner): Buffer {
  return Buffer.from(`${PAYLOAD_KEY_INFO}\0${o.keyId}\0${o.orgId}\0${o.workflowId}`, 'utf8');
}

/** u32 length of the JSON metadata (base64 values), the metadata, then the data. */
function serialize(p: Payload): Buffer {
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) meta[k] = Buffer.from(v).toString('base64');
  const head = Buffer.from(JSON.stringify(meta), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32BE(head.length);
  return Buffer.concat([len, head, Buffer.from(p.data ?? new Uint8Array())]);
}

function deserialize(b: Buffer): Payload {
  const n = b.readUInt32BE(0);
  const meta = JSON.parse(b.subarray(4, 4 + n).toString('utf8')) as Record<string, string>;
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(meta)) metadata[k] = Buffer.from(v, 'base64');
  return { metadata, data: b.subarray(4 + n) };
}

/**
 * The data converters of every Temporal client and worker of the service: the client's is loaded
 * here; the worker's names the failure converter by path (its workflow sandbox loads it too).
 */
export function dataConverters(codec: EncryptionCodec): {
  client: LoadedDataConverter;
  worker: { payloadCodecs: PayloadCodec[]; failureConverterPath: string };
} {
  return {
    client: {
      payloadConverter: defaultPayloadConverter,
      failureConverter: new DefaultFailureConverter({ encodeCommonAttributes: true }),
      payloadCodecs: [codec],
    },
    worker: { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH },
  };
}

/** The codec of a process of the service: its keyring, and runs' organizations from the store. */
export function serviceCodec(deps: { sql: Tx; keyring: Keyring }): EncryptionCodec {
  // One codec per keyring and store, so the client and the worker of one process share the cache
  // of which organization a run belongs to (one store read per run, not one per side).
  const byStore = sharedCodecs.get(deps.keyring) ?? new WeakMap<Tx, EncryptionCodec>();
  sharedCodecs.set(deps.keyring, byStore);
  let codec = byStore.get(deps.sql);
  if (!codec) {
    codec = new EncryptionCodec(deps.keyring, (id) => orgOfTemporalWorkflow(deps.sql, id));
    byStore.set(deps.sql, codec);
  }
  return codec;
}

const sharedCodecs = new WeakMap<Keyring, WeakMap<Tx, EncryptionCodec>>();
