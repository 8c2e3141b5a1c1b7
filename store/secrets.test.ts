import { describe, expect, it } from 'vitest';
import { newId } from './ids.ts';
import { hashPassword, mintSecret, parseSecret, secretMatches, verifyPassword } from './secrets.ts';

describe('bearer secrets', () => {
  it('carry their row id and match only their own hash', () => {
    const id = newId('key');
    const a = mintSecret('cskey', id);
    expect(parseSecret(a.secret)).toEqual({ kind: 'cskey', ulid: id.slice(4) });
    expect(secretMatches(a.secret, a.hash)).toBe(true);
    expect(secretMatches(mintSecret('cskey', id).secret, a.hash)).toBe(false);
    expect(a.hash).not.toContain(a.secret);
  });

  it('rejects malformed secrets', () => {
    expect(parseSecret('nope')).toBeNull();
    expect(parseSecret('cskey_01ARZ3NDEKTSV4RRFFQ69G5FAV_short')).toBeNull();
  });
});

describe('scrypt passwords', () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored.startsWith('scrypt$')).toBe(true);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
});
