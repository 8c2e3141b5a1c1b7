import { describe, expect, it } from 'vitest';
import { isId, newId } from './ids.ts';

describe('newId', () => {
  it('is prefix + ULID, unique, and sorts by creation (random part from the pooled CSPRNG)', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('aud'));
    expect(ids.every((id) => isId('aud', id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
