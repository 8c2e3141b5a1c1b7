// A short-lived connection to the harness's own PostgreSQL (the target database of many tests),
// for seeding tables and roles a test needs and checking what reached the database.
import postgres from 'postgres';
import { servers } from '../harness/servers.ts';

export async function withHarnessPostgres<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const pg = servers().postgres;
  const sql = postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.database,
    ssl: false,
    onnotice: () => {},
  });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}
