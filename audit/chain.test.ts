import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, entryHash, GENESIS_HASH } from './chain.ts';

describe('canonical JSON (the hashed text of an audit entry)', () => {
  it('sorts object keys at every level, so key order never changes the hash', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"x":1,"y":2}]},"b":1}',
    );
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('keeps strings exact, escapes included', () => {
    expect(canonicalJson({ s: 'quote " and \n newline, ünïcode' })).toBe(
      '{"s":"quote \\" and \\n newline, ünïcode"}',
    );
  });

  it('leaves out undefined members as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });
});

describe('entry hash', () => {
  it('is sha256 of prev_hash, seq and body joined by colons', () => {
    const expected = createHash('sha256').update(`${GENESIS_HASH}:1:{"a":1}`).digest('hex');
    expect(entryHash(GENESIS_HASH, 1n, '{"a":1}')).toBe(expected);
  });

  it('changes with any of its inputs', () => {
    const h = entryHash(GENESIS_HASH, 1, '{}');
    expect(entryHash(GENESIS_HASH, 2, '{}')).not.toBe(h);
    expect(entryHash('f'.repeat(64), 1, '{}')).not.toBe(h);
    expect(entryHash(GENESIS_HASH, 1, '{"x":1}')).not.toBe(h);
  });
});
