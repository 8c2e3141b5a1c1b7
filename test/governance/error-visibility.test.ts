// A failed query's error may quote the values it read (`invalid input syntax for type integer:
// "SSN-000011"`), computed under the policy of whoever it ran as. A reviewer whose own policy
// hides those values reads a generic message instead, wherever the error is shown: the request,
// the request list, and the answer to the approval that ran it. The author keeps the detail.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { json, type Person, type RequestJson, type SubmitJson, startWorld, type World } from './world.ts';

const SSN = 'SSN-000011';
const people = `people_${randomBytes(4).toString('hex')}`;
let w: World;
let author: Person;
let reviewer: Person;
let db: { id: string };

beforeAll(async () => {
  w = await startWorld();
  await withPg(async (sql) => {
    await sql.unsafe(`create table ${people} (id int primary key, email text, ssn text)`);
    await sql.unsafe(`insert into ${people} values (1, 'a@example.test', '${SSN}')`);
  });
  author = await w.person('admin', 'author');
  reviewer = await w.person('member', 'reviewer');
  db = await w.database('postgres', {}, 1);
  const policy = await w.as('key', 'POST', `/api/v1/desk/databases/${db.id}/policies`, {
    name: 'ssn hidden for members',
    rules: [
      { table: people, column: 'id', action: 'show' },
      { table: people, column: 'email', action: 'show' },
      { table: people, column: 'ssn', action: 'hide' },
    ],
    assignments: { roles: ['member'] },
  });
  expect(policy.status, await policy.clone().text()).toBe(201);
});
afterAll(async () => {
  await w?.stop();
  await withPg((sql) => sql.unsafe(`drop table if exists ${people}`));
});

async function withPg<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
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

const base = '/api/v1/desk/query-requests';

describe('errors of failed query requests under the reader’s policy', () => {
  it('a reviewer under a stricter policy never reads the value an admin’s failed request quoted', async () => {
    const submitted = await json<SubmitJson>(
      await w.as(author, 'POST', base, {
        database_id: db.id,
        statement: `select cast(ssn as int) from ${people} where id = 1`,
        run_on_approval: true,
      }),
    );
    const id = submitted.request!.id;
    // The last approval runs it as the author, and the reviewer gets the outcome.
    const approved = await w.as(reviewer, 'POST', `${base}/${id}/approve`, {});
    expect(approved.status).toBe(200);
    const answer = await json<RequestJson & { run: { status: string; detail: string } }>(approved);
    expect(answer.run.status).toBe('failed');
    expect(answer.run.detail).toMatch(/the error is hidden/);
    expect(JSON.stringify(answer)).not.toContain(SSN);

    const seen = await json<RequestJson>(await w.as(reviewer, 'GET', `${base}/${id}`));
    expect(seen.status).toBe('failed');
    expect(seen.error).toMatch(/the error is hidden/);
    const list = await w.as(reviewer, 'GET', `${base}?status=failed`);
    expect(list.status).toBe(200);
    expect(await list.text()).not.toContain(SSN);

    // The author ran it: they read the database's own message.
    const own = await json<RequestJson>(await w.as(author, 'GET', `${base}/${id}`));
    expect(own.error).toContain(`invalid input syntax for type integer: "${SSN}"`);
  });
});
