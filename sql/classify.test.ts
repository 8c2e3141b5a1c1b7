import { describe, expect, it } from 'vitest';
import type { AdapterName } from '../adapters/types.ts';
import { classifyStatement } from './classify.ts';

const cases: Array<[AdapterName, string, 'read' | 'write']> = [
  ['postgres', 'select * from orders where id = $1', 'read'],
  ['postgres', 'SELECT 1; SELECT 2', 'read'],
  ['postgres', 'values (1), (2)', 'read'],
  ['postgres', 'show search_path', 'read'],
  ['postgres', 'explain select * from orders', 'read'],
  ['postgres', 'explain delete from orders', 'read'],
  ['postgres', 'explain analyze delete from orders', 'write'],
  ['postgres', 'update orders set total = 0', 'write'],
  ['postgres', 'select 1; delete from orders', 'write'],
  ['postgres', 'with gone as (delete from orders returning *) select * from gone', 'write'],
  ['postgres', 'select * into copy from orders', 'write'],
  ['postgres', 'select * from orders for update', 'write'],
  ['postgres', "select nextval('orders_id_seq')", 'write'],
  ['postgres', 'select pg_catalog.pg_terminate_backend(42)', 'write'],
  ['postgres', 'create table t (a int)', 'write'],
  ['postgres', 'set role admin', 'write'],
  ['postgres', 'selec * from orders', 'write'],
  ['postgres', '', 'write'],
  ['mysql', 'select * from orders where id = ?', 'read'],
  ['mysql', 'show tables', 'read'],
  ['mysql', 'select * from orders for update', 'write'],
  ['mysql', "select * from orders into outfile '/tmp/x'", 'write'],
  ['mysql', 'select 1; update orders set total = 0', 'write'],
  ['mysql', 'insert into orders values (1)', 'write'],
  ['mysql', 'select * from orders where id in (select id from (delete from x) y)', 'write'],
  ['mysql', "select get_lock('a', 1)", 'write'],
  ['mysql', 'drop table orders', 'write'],
  ['clickhouse', 'select * from events where id = {p1:String}', 'read'],
  ['clickhouse', 'alter table events delete where 1', 'write'],
  ['sqlserver', 'select top 10 * from orders where id = @p1', 'read'],
  ['sqlserver', 'delete from orders where id = @p1', 'write'],
  ['oracle', 'select * from orders where id = :1', 'read'],
  ['oracle', 'delete from orders where id = :1', 'write'],
];

describe('statement classification (parsed, fail closed)', () => {
  it.each(cases)('%s: %s is %s', async (adapter, sql, expected) => {
    expect(await classifyStatement(adapter, sql)).toBe(expected);
  });
});
