import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { generateKey, Keyring } from '../store/crypto.ts';
import { EncryptionCodec, ORG, ownerOf, PayloadDecryptError, WORKFLOW } from './payload-codec.ts';

const orgs: Record<string, string> = { run_A: 'org_1', run_B: 'org_2' };
const orgOf = async (id: string) => orgs[id] ?? null;
const ctx = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });
const text = (p: { data?: Uint8Array | null }) => Buffer.from(p.data ?? []).toString('utf8');

describe('Temporal payload encryption', () => {
  const key = generateKey();
  const codec = new EncryptionCodec(Keyring.fromBase64(key), orgOf);
  const secret = defaultPayloadConverter.toPayload({ salary: 123456, name: 'Ada Lovelace' });

  it('leaves no plaintext and labels the key, organization and workflow', async () => {
    const [enc] = await codec.encode([secret], ctx('run_A'));
    expect(text(enc!)).not.toContain('Lovelace');
    expect(text(enc!)).not.toContain('123456');
    expect(ownerOf(enc!)).toEqual({ keyId: codec.currentKeyId, orgId: 'org_1', workflowId: 'run_A' });
    const [back] = await codec.decode([enc!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ salary: 123456, name: 'Ada Lovelace' });
  });

  it("decodes a Schedule's stored arguments, whose empty labels come back as plain arrays", async () => {
    const [enc] = await codec.encode([secret]);
    const metadata = Object.fromEntries(
      Object.entries(enc!.metadata!).map(([k, v]) => [k, v.length === 0 ? ([] as unknown as Uint8Array) : v]),
    );
    expect(metadata[ORG]).toEqual([]);
    const [back] = await codec.decode([{ ...enc!, metadata }]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ salary: 123456, name: 'Ada Lovelace' });
  });

  it('passes through payloads written before encryption', async () => {
    const [back] = await codec.decode([secret]);
    expect(back).toBe(secret);
  });

  it('refuses a payload relabelled as another organization or workflow (bound as associated data)', async () => {
    const [enc] = await codec.encode([secret], ctx('run_A'));
    const asOrg2 = { ...enc!, metadata: { ...enc!.metadata, [ORG]: Buffer.from('org_2') } };
    const asRunB = { ...enc!, metadata: { ...enc!.metadata, [WORKFLOW]: Buffer.from('run_B') } };
    await expect(codec.decode([asOrg2])).rejects.toThrow(PayloadDecryptError);
    await expect(codec.decode([asRunB])).rejects.toThrow(PayloadDecryptError);
  });

  it('rotates: a new key encrypts, the old key still decodes, a ring without it cannot', async () => {
    const [old] = await codec.encode([secret], ctx('run_A'));
    const next = generateKey();
    const rotated = new EncryptionCodec(Keyring.fromBase64(next, [key]), orgOf);
    const [fresh] = await rotated.encode([secret], ctx('run_A'));
    expect(ownerOf(fresh!).keyId).toBe(rotated.currentKeyId);
    expect(rotated.currentKeyId).not.toBe(codec.currentKeyId);
    const [a, b] = await rotated.decode([old!, fresh!]);
    expect(defaultPayloadConverter.fromPayload(a!)).toEqual(defaultPayloadConverter.fromPayload(b!));
    const forgetful = new EncryptionCodec(Keyring.fromBase64(next), orgOf);
    await expect(forgetful.decode([old!])).rejects.toThrow(/not configured/);
  });

  it('derives its keys (HKDF): neither the raw key nor another label', () => {
    const ring = Keyring.fromBase64(key);
    const raw = Buffer.from(key, 'base64');
    const mine = ring.hkdfKeys('countersign temporal payload codec v1').keys.get(codec.currentKeyId)!;
    expect(mine.equals(raw)).toBe(false);
    expect(mine.equals(ring.hkdfKeys('another use').keys.get(codec.currentKeyId)!)).toBe(false);
  });
});
