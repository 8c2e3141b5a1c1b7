import { describe, expect, it } from 'vitest';
import { PgTypes, paramText, paramType } from './postgres-values.ts';

describe('postgres values', () => {
  const types = new PgTypes();
  const parse = (oid: number, text: string) => {
    const p = types.parserFor(oid);
    return p ? p(text) : text;
  };

  it('parses dates and times to ISO text and bytea to base64', () => {
    expect(parse(1082, '2024-01-02')).toBe('2024-01-02');
    expect(parse(1114, '2024-01-02 10:11:12.123456')).toBe('2024-01-02T10:11:12.123456');
    expect(parse(1184, '2024-01-02 10:11:12.5+02')).toBe('2024-01-02T08:11:12.500Z');
    expect(parse(1184, 'infinity')).toBe('infinity');
    expect(parse(17, '\\xdeadbeef')).toBe('3q2+7w==');
  });

  it('keeps int8 and numeric exact as text, and reads small numbers, booleans and JSON', () => {
    expect(parse(20, '9007199254740993')).toBe('9007199254740993');
    expect(parse(1700, '1.50')).toBe('1.50');
    expect(parse(23, '42')).toBe(42);
    expect(parse(701, 'NaN')).toBeNaN();
    expect(parse(16, 't')).toBe(true);
    expect(parse(16, 'f')).toBe(false);
    expect(parse(3802, '{"a":[1]}')).toEqual({ a: [1] });
    expect(parse(2950, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  });

  it('parses arrays element-wise, and the arrays of a server once it said which they are', () => {
    expect(parse(1007, '{1,NULL,3}')).toEqual([1, null, 3]);
    expect(parse(1016, '{{1,2},{3,4}}')).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    expect(parse(1185, '{"2024-01-02 10:11:12+00"}')).toEqual(['2024-01-02T10:11:12.000Z']);
    // uuid[] is not built in: text until the pool read the server's array types.
    expect(parse(2951, '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}')).toBe(
      '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
    );
    types.addArrays([[2951, 2950]]);
    expect(parse(2951, '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}')).toEqual([
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    ]);
  });

  it('types parameters by what they are, and sends bytes as bytes', () => {
    expect([new Date(0), new Uint8Array([1]), 1n, true, 1, 'x', null].map(paramType)).toEqual([
      1184, 17, 20, 16, 0, 0, 0,
    ]);
    expect(paramText(new Date('2024-01-02T03:04:05.678Z'))).toBe('2024-01-02T03:04:05.678Z');
    expect(paramText(9007199254740993n)).toBe('9007199254740993');
    expect(paramText(false)).toBe('false');
    expect(paramText(null)).toBeNull();
    const bytes = paramText(new Uint8Array([0xde, 0xad]).subarray(1));
    expect(Buffer.isBuffer(bytes) && [...bytes]).toEqual([0xad]);
  });
});
