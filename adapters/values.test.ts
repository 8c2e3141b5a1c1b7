import { describe, expect, it } from 'vitest';
import { AdapterError } from './errors.ts';
import {
  checkExecuteOptions,
  checkStatement,
  groupSchema,
  jsonValue,
  RowCollector,
  reusableAfter,
  statementKind,
} from './values.ts';

describe('jsonValue: the value mapping of README "Value mapping"', () => {
  it('keeps JSON scalars and parsed JSON documents', () => {
    expect(jsonValue('a')).toBe('a');
    expect(jsonValue(1.5)).toBe(1.5);
    expect(jsonValue(false)).toBe(false);
    expect(jsonValue(null)).toBe(null);
    expect(jsonValue(undefined)).toBe(null);
    const doc = { a: [1, { b: 'c' }] };
    expect(jsonValue(doc)).toBe(doc);
  });

  it('writes bigint as a decimal string, always', () => {
    expect(jsonValue(9007199254740993n)).toBe('9007199254740993');
    expect(jsonValue(-1n)).toBe('-1');
  });

  it('writes Dates as ISO 8601 UTC and an invalid Date as null', () => {
    expect(jsonValue(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)))).toBe('2024-01-02T03:04:05.006Z');
    expect(jsonValue(new Date(Number.NaN))).toBe(null);
  });

  it('writes bytes as base64, Buffer or plain Uint8Array view alike', () => {
    expect(jsonValue(Buffer.from([0xde, 0xad, 0xbe, 0xef]))).toBe('3q2+7w==');
    const view = new Uint8Array([9, 1, 2, 3, 9]).subarray(1, 4);
    expect(jsonValue(view)).toBe('AQID');
  });

  it('spells NaN and infinities as strings, which JSON would turn into null', () => {
    expect(jsonValue(Number.NaN)).toBe('NaN');
    expect(jsonValue(Number.POSITIVE_INFINITY)).toBe('Infinity');
    expect(jsonValue(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
  });

  it('maps array elements', () => {
    expect(jsonValue([1n, new Date(0), [Buffer.from('a')]])).toEqual([
      '1',
      '1970-01-01T00:00:00.000Z',
      ['YQ=='],
    ]);
  });
});

describe('statementKind: the command of engines without a command tag', () => {
  it.each([
    ['select 1', 'SELECT'],
    ['  Insert into t values (1)', 'INSERT'],
    ['-- note\n/* block /* nested */ still */ update t set a = 1', 'UPDATE'],
    ['(select 1) union (select 2)', 'SELECT'],
    ['with x as (select 1), y as (delete from t returning *) select * from x', 'SELECT'],
    ['WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r) INSERT INTO t SELECT n FROM r', 'INSERT'],
    ['with x as (select \'select\' as "insert") update t set a = (select 1)', 'UPDATE'],
    ['with x as (select $$ ) delete $$) merge into t using x on true when matched then delete', 'MERGE'],
    ['create table t (a int)', 'CREATE'],
    ['', ''],
    ['  -- only a comment', ''],
  ])('%s → %s', (sql, kind) => {
    expect(statementKind(sql)).toBe(kind);
  });

  it('checkStatement refuses an empty statement', () => {
    expect(() => checkStatement(' /* nothing */ ')).toThrow(AdapterError);
    expect(checkStatement('show tables')).toBe('SHOW');
  });

  it('reuses a pooled connection only after statements that leave the session as it was', () => {
    for (const kind of ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'SHOW'])
      expect(reusableAfter(kind)).toBe(true);
    for (const kind of ['BEGIN', 'START', 'SET', 'USE', 'CREATE', 'CALL', 'LOCK', ''])
      expect(reusableAfter(kind)).toBe(false);
  });
});

describe('RowCollector', () => {
  it('keeps maxRows rows, says when more arrived, and maps values', () => {
    const c = new RowCollector(2);
    expect(c.add([1n])).toBe(true);
    expect(c.add([2n])).toBe(true);
    expect(c.truncated).toBe(false);
    expect(c.add([3n])).toBe(false);
    expect(c.result(['n'], 'SELECT', [], null)).toEqual({
      columns: ['n'],
      rows: [['1'], ['2']],
      command: 'SELECT',
      messages: [],
      num_rows: 2,
      truncated: true,
    });
  });

  it('reports affected rows for a statement without columns', () => {
    expect(new RowCollector(10).result([], 'UPDATE', ['note'], 7).num_rows).toBe(7);
    expect(new RowCollector(10).result([], 'CREATE', [], null).num_rows).toBe(0);
  });

  it('with maxRows 0 returns no rows but still tells whether there were any', () => {
    const c = new RowCollector(0);
    expect(c.add([1])).toBe(false);
    expect(c.result(['a'], 'SELECT', [], null)).toMatchObject({ rows: [], num_rows: 0, truncated: true });
  });
});

describe('checkExecuteOptions', () => {
  it('refuses a negative or fractional cap and a non-positive timeout', () => {
    expect(() => checkExecuteOptions({ maxRows: -1, timeoutSeconds: 1 })).toThrow(/maxRows/);
    expect(() => checkExecuteOptions({ maxRows: 1.5, timeoutSeconds: 1 })).toThrow(/maxRows/);
    expect(() => checkExecuteOptions({ maxRows: 1, timeoutSeconds: 0 })).toThrow(/timeoutSeconds/);
    expect(() => checkExecuteOptions({ maxRows: 1, timeoutSeconds: Number.NaN })).toThrow(/timeoutSeconds/);
    expect(() => checkExecuteOptions({ maxRows: 0, timeoutSeconds: 0.5 })).not.toThrow();
  });
});

describe('groupSchema', () => {
  it('groups ordered (table, column) rows into tables', () => {
    const row = (name: string, column: string, is_view = false) => ({
      schema: 's',
      name,
      is_view,
      column,
      type: 'int',
      nullable: true,
    });
    expect(groupSchema([row('a', 'x'), row('a', 'y'), row('v', 'z', true)])).toEqual([
      {
        schema: 's',
        name: 'a',
        kind: 'table',
        columns: [
          { name: 'x', type: 'int', nullable: true },
          { name: 'y', type: 'int', nullable: true },
        ],
      },
      { schema: 's', name: 'v', kind: 'view', columns: [{ name: 'z', type: 'int', nullable: true }] },
    ]);
  });
});
