import { describe, expect, it } from 'vitest';
import { DecryptError, generateKey, Keyring } from './crypto.ts';

describe('AES-256-GCM secret envelope', () => {
  const ring = Keyring.fromBase64(generateKey());

  it('round-trips and never contains the plaintext', () => {
    const sealed = ring.encrypt('hunter2-password', 'crd_1');
    expect(sealed.startsWith('cs1.')).toBe(true);
    expect(sealed).not.toContain('hunter2');
    expect(ring.decrypt(sealed, 'crd_1')).toBe('hunter2-password');
  });

  it('uses a fresh IV each time', () => {
    expect(ring.encrypt('same')).not.toBe(ring.encrypt('same'));
  });

  it('detects tampering with the ciphertext', () => {
    const sealed = ring.encrypt('secret value');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString('base64url');
    expect(() => ring.decrypt(parts.join('.'))).toThrow(DecryptError);
  });

  it('detects a secret moved to another row (associated data)', () => {
    const sealed = ring.encrypt('secret', 'crd_A');
    expect(() => ring.decrypt(sealed, 'crd_B')).toThrow(/authentication failed/);
  });

  it('rejects unknown versions and keys', () => {
    expect(() => ring.decrypt('cs0.x.y.z')).toThrow(/unknown envelope/);
    const other = Keyring.fromBase64(generateKey());
    expect(() => other.decrypt(ring.encrypt('x'))).toThrow(/not configured/);
  });

  it('rotates: old envelopes open with the old key in the ring, new ones use the new key', () => {
    const oldKey = generateKey();
    const before = Keyring.fromBase64(oldKey).encrypt('rotate me');
    const after = Keyring.fromBase64(generateKey(), [oldKey]);
    expect(after.decrypt(before)).toBe('rotate me');
    expect(after.needsRotation(before)).toBe(true);
    expect(after.needsRotation(after.encrypt('new'))).toBe(false);
  });
});
