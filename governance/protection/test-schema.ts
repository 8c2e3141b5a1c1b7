// A fixed schema and policy for the rewriters' unit tests (input data, not a stand-in for a server).

import { DbSchema, type RelationInfo } from '../../sql/catalog.ts';
import type { RuleRow } from '../../store/data-protection.ts';
import { RuleBook } from './rules.ts';

const col = (name: string, type: string, number: number) => ({ name, type, number });

export function testSchema(schema: string, foldCase: boolean): DbSchema {
  const relations: RelationInfo[] = [
    {
      schema,
      name: 'users',
      kind: 'table',
      oid: 100,
      columns: [
        col('id', 'integer', 1),
        col('email', 'text', 2),
        col('name', 'text', 3),
        col('ssn', 'character varying(11)', 4),
        col('phone', 'text', 5),
      ],
    },
    {
      schema,
      name: 'orders',
      kind: 'table',
      oid: 200,
      columns: [col('id', 'integer', 1), col('user_id', 'integer', 2), col('total', 'numeric', 3)],
    },
  ];
  return new DbSchema(relations, [schema], foldCase);
}

const rule = (
  table: string,
  column: string,
  action: RuleRow['action'],
  keep_first = 0,
  keep_last = 0,
): RuleRow => ({
  schema_name: null,
  table_name: table,
  column_name: column,
  action,
  keep_first,
  keep_last,
});

export function testRules(foldCase: boolean): RuleBook {
  return new RuleBook(
    'dpp_test',
    'salt',
    [
      rule('users', 'id', 'show'),
      rule('users', 'name', 'show'),
      rule('users', 'email', 'mask'),
      rule('users', 'ssn', 'hash'),
      rule('users', 'phone', 'partial', 0, 2),
      rule('orders', '*', 'show'),
    ],
    foldCase,
  );
}
