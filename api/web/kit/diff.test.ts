import { describe, expect, it } from 'vitest';
import { lineDiff } from './diff.ts';

describe('lineDiff', () => {
  it('keeps common lines and marks what was removed and added', () => {
    expect(lineDiff('select id\nfrom t\nwhere x = 1', 'select id, name\nfrom t\nwhere x = 1')).toEqual([
      { kind: 'removed', text: 'select id' },
      { kind: 'added', text: 'select id, name' },
      { kind: 'same', text: 'from t' },
      { kind: 'same', text: 'where x = 1' },
    ]);
  });
  it('an unchanged statement is all the same', () => {
    expect(lineDiff('a\nb', 'a\nb').every((l) => l.kind === 'same')).toBe(true);
  });
  it('appending lines adds them at the end', () => {
    expect(lineDiff('a', 'a\nb\nc').map((l) => l.kind)).toEqual(['same', 'added', 'added']);
  });
});
