import { describe, expect, it } from 'vitest';
import { generateKey, Keyring } from '../store/crypto.ts';
import { parseRelayPath, relayPath, relayToken, relayTokenMatches } from './relay-auth.ts';

describe('relay link credential', () => {
  const key = generateKey();

  it('is the same in every process that shares the encryption key, and differs per key and label', () => {
    const a = Keyring.fromBase64(key);
    const b = Keyring.fromBase64(key);
    expect(relayToken(a)).toBe(relayToken(b));
    expect(relayToken(Keyring.fromBase64(generateKey()))).not.toBe(relayToken(a));
    expect(a.deriveKey('one').equals(a.deriveKey('two'))).toBe(false);
    expect(a.deriveKey('one')).toHaveLength(32);
    // One-way: the derived value is not the key itself.
    expect(a.deriveKey('one').toString('base64')).not.toBe(key);
  });

  it('accepts only the exact bearer token, including one derived from a key being rotated out', () => {
    const ring = Keyring.fromBase64(key);
    const token = relayToken(ring);
    expect(relayTokenMatches(ring, `Bearer ${token}`)).toBe(true);
    expect(relayTokenMatches(ring, token)).toBe(false);
    expect(relayTokenMatches(ring, undefined)).toBe(false);
    const altered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(relayTokenMatches(ring, `Bearer ${altered}`)).toBe(false);
    expect(relayTokenMatches(ring, `Bearer ${relayToken(Keyring.fromBase64(generateKey()))}`)).toBe(false);
    const rotated = Keyring.fromBase64(generateKey(), [key]);
    expect(relayTokenMatches(rotated, `Bearer ${token}`)).toBe(true);
    expect(relayTokenMatches(rotated, `Bearer ${relayToken(rotated)}`)).toBe(true);
  });

  it('maps agent ids to relay paths and back', () => {
    expect(relayPath('agt_01')).toBe('/internal/agents/agt_01/relay');
    expect(parseRelayPath('/internal/agents/agt_01/relay')).toBe('agt_01');
    expect(parseRelayPath('/internal/agents/agt_01/relay/x')).toBeNull();
    expect(parseRelayPath('/api/v1/agents/connect')).toBeNull();
  });
});
