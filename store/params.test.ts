import { describe, expect, it } from 'vitest';
import { decodeParams, encodeParams } from './params.ts';

describe('stored query parameters', () => {
  it('round-trip every bound value type through JSON', () => {
    const params = [
      'text',
      42,
      1.5,
      true,
      null,
      2n ** 70n,
      new Date('2026-01-02T03:04:05.678Z'),
      new Uint8Array([0, 255, 7]),
    ];
    const stored = JSON.parse(JSON.stringify(encodeParams(params)));
    expect(decodeParams(stored)).toEqual(params);
  });

  it('refuse a stored value of unknown shape', () => {
    expect(() => decodeParams([{ $type: 'regex', value: '.*' }])).toThrow();
    expect(() => decodeParams({})).toThrow();
  });
});
