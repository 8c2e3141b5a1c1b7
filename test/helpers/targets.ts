// One connection to a shared target server as its superuser, for a test's own set-up and checks
// (never through the service), closed when `fn` is done.
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { servers } from '../harness/servers.ts';

export async function withPg<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const pg = servers().postgres;
  const sql = postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.database,
    max: 1,
    onnotice: () => {},
  });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

export async function withMy<T>(fn: (conn: mysql.Connection) => Promise<T>): Promise<T> {
  const my = servers().mariadb;
  const conn = await mysql.createConnection({
    host: my.host,
    port: my.port,
    user: my.user,
    password: my.password,
    database: my.database,
  });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}
