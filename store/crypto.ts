import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (credential passwords, SSL keys, API step headers, integration tokens)
 * are sealed with AES-256-GCM. The envelope is versioned and names its key, so a key can
 * be rotated: new writes use the current key, reads accept any key still in the ring.
 *
 *   cs1.<key id: 8 hex of sha256(key)>.<base64url iv (12 bytes)>.<base64url ciphertext || tag (16 bytes)>
 */
const VERSION = 'cs1';

export class DecryptError extends Error {
  constructor(reason: string) {
    super(`cannot decrypt secret: ${reason}`);
    this.name = 'DecryptError';
  }
}

export class Keyring {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentId: string;

  /** `current` and `old` are raw 32-byte keys. */
  constructor(current: Buffer, old: Buffer[] = []) {
    for (const key of [current, ...old]) {
      if (key.length !== 32) throw new Error('encryption keys must be 32 bytes');
      this.keys.set(keyId(key), key);
    }
    this.currentId = keyId(current);
  }

  /** Builds a ring from base64 keys (COUNTERSIGN_ENCRYPTION_KEY and _OLD_KEYS). */
  static fromBase64(current: string, old: string[] = []): Keyring {
    return new Keyring(
      Buffer.from(current, 'base64'),
      old.map((k) => Buffer.from(k, 'base64')),
    );
  }

  /** Seals `plaintext`; `context` (e.g. the owning row's id) is bound as associated data. */
  encrypt(plaintext: string, context = ''): string {
    const key = this.keys.get(this.currentId)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.currentId, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** Opens an envelope; any change to it, to the context or a missing key is a DecryptError. */
  decrypt(envelope: string, context = ''): string {
    const parts = envelope.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new DecryptError('unknown envelope format');
    const [, kid, ivText, bodyText] = parts as [string, string, string, string];
    const key = this.keys.get(kid);
    if (!key) throw new DecryptError('sealed with a key that is not configured');
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== 12 || body.length < 16) throw new DecryptError('truncated envelope');
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - 16));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new DecryptError('authentication failed (tampered or wrong context)');
    }
  }

  /**
   * A key for `label` derived from the current key: HMAC-SHA256(key, label). Every process of a
   * deployment shares the encryption key, so they derive the same value without another secret;
   * the HMAC is one-way, so the derived value reveals nothing about the key it came from.
   */
  deriveKey(label: string): Buffer {
    return derive(this.keys.get(this.currentId)!, label);
  }

  /** The same derivation with every key of the ring (current first), for checks during a rotation. */
  deriveKeys(label: string): Buffer[] {
    const current = this.keys.get(this.currentId)!;
    return [current, ...[...this.keys.values()].filter((k) => k !== current)].map((k) => derive(k, label));
  }

  /**
   * HKDF-SHA256 (RFC 5869) of every key of the ring under `info`, by key id, and the current id:
   * for a subsystem that keeps its own ciphertexts (Temporal payloads) and must name the key in them.
   */
  hkdfKeys(info: string): { currentId: string; keys: Map<string, Buffer> } {
    const keys = new Map<string, Buffer>();
    for (const [id, key] of this.keys)
      keys.set(id, Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32)));
    return { currentId: this.currentId, keys };
  }

  /** True when the envelope was sealed with an old key and should be re-encrypted. */
  needsRotation(envelope: string): boolean {
    return envelope.split('.')[1] !== this.currentId;
  }
}

function derive(key: Buffer, label: string): Buffer {
  return createHmac('sha256', key).update(label, 'utf8').digest();
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A fresh random 32-byte key, base64. */
export function generateKey(): string {
  return randomBytes(32).toString('base64');
}
