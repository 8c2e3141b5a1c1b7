import { describe, expect, it } from 'vitest';
import type { RuleRow } from '../../store/data-protection.ts';
import { RuleBook } from './rules.ts';

const r = (
  schema_name: string | null,
  table_name: string,
  column_name: string,
  action: RuleRow['action'],
): RuleRow => ({
  schema_name,
  table_name,
  column_name,
  action,
  keep_first: 0,
  keep_last: 0,
});

describe('RuleBook: the most specific rule wins, anything unnamed is hidden', () => {
  const book = new RuleBook('dpp_x', 's', [
    r(null, 'users', '*', 'show'),
    r(null, 'users', 'email', 'mask'),
    r('audit', 'users', 'email', 'hash'),
  ]);
  it('named column over the table wildcard, schema-specific over any schema', () => {
    expect(book.treatment('public', 'users', 'name').action).toBe('show');
    expect(book.treatment('public', 'users', 'email').action).toBe('mask');
    expect(book.treatment('audit', 'users', 'email').action).toBe('hash');
  });
  it('default deny: a table or column with no rule is hidden', () => {
    expect(book.treatment('public', 'orders', 'id').action).toBe('hide');
  });
  it('case folding only when asked (MySQL)', () => {
    expect(book.treatment('public', 'USERS', 'NAME').action).toBe('hide');
    const folded = new RuleBook('dpp_x', 's', [r(null, 'users', 'name', 'show')], true);
    expect(folded.treatment('shop', 'USERS', 'NAME').action).toBe('show');
  });
});
