import { describe, expect, it } from 'vitest';
import type { DatabaseRow } from '../store/databases.ts';
import type { QueryActor } from './query.ts';
import { bypassRefusal } from './review-rules.ts';

const db = { name: 'orders', review_bypass_allowed: true } as DatabaseRow;
const root: QueryActor = { kind: 'user', userId: 'usr_root', role: 'super_admin' };
const ack = { acknowledged: true };

describe('review bypass rules (SPEC.md 2.2 review_bypass_allowed)', () => {
  it('allow a super admin on their own query, on a database that allows it, acknowledged', () => {
    expect(bypassRefusal(root, 'usr_root', db, ack)).toBeNull();
  });

  const refused: Array<[string, QueryActor, string, DatabaseRow, { acknowledged: boolean }, RegExp]> = [
    ['an admin', { kind: 'user', userId: 'usr_a', role: 'admin' }, 'usr_a', db, ack, /only a super admin/],
    ['an API key', { kind: 'api_key', apiKeyId: 'key_1' }, 'usr_root', db, ack, /only a super admin/],
    ['a key acting for the super admin', { ...root, viaApiKeyId: 'key_1' }, 'usr_root', db, ack, /API key/],
    ['someone else’s query', root, 'usr_other', db, ack, /their own query/],
    [
      'a database that does not allow it',
      root,
      'usr_root',
      { ...db, review_bypass_allowed: false },
      ack,
      /does not allow/,
    ],
    ['no acknowledgment', root, 'usr_root', db, { acknowledged: false }, /acknowledged explicitly/],
  ];
  it.each(refused)('refuse %s', (_, actor, author, database, bypass, reason) => {
    expect(bypassRefusal(actor, author, database, bypass)).toMatch(reason);
  });
});
