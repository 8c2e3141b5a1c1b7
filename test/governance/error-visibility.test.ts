// A failed query's error may quote the values it read (`invalid input syntax for type integer:
// "SSN-000011"`), computed under the policy of whoever it ran as. A reviewer whose own policy
// hides those values reads a generic message instead, wherever the error is shown: the request,
// the request list, and the answer to the approval that ran it. The author keeps the detail.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { signIn } from '../helpers/service.ts';
import { withPg } from '../helpers/targets.ts';
import {
  type AuditJson,
  json,
  type Person,
  type RequestJson,
  type SubmitJson,
  startWorld,
  type World,
} from './world.ts';

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

describe('errors of failed queries in the audit log under the reader’s policy', () => {
  let open: { id: string };
  let policed: Person & { password: string };

  beforeAll(async () => {
    open = await w.database('postgres');
    const password = 'policed admin password 123';
    const user = await createUser(w.svc.deps.sql, {
      orgId: w.orgId,
      email: 'policed-admin@example.test',
      role: 'admin',
      password,
    });
    const { secret } = await createPersonalToken(w.svc.deps.sql, {
      userId: user.id,
      name: 'test',
      expiresAt: null,
    });
    policed = { id: user.id, email: user.email, role: 'admin', token: secret, password };
    const policy = await w.as('key', 'POST', `/api/v1/desk/databases/${open.id}/policies`, {
      name: 'ssn hidden for one admin',
      rules: [
        { table: people, column: 'id', action: 'show' },
        { table: people, column: 'ssn', action: 'hide' },
      ],
      assignments: { users: [policed.id] },
    });
    expect(policy.status, await policy.clone().text()).toBe(201);
    // The super admin (no policy) runs a query whose error quotes the value.
    const ran = await w.as(w.root, 'POST', base, {
      database_id: open.id,
      statement: `select cast(ssn as int) from ${people} where id = 1`,
    });
    expect(await ran.text()).toContain(SSN);
  });

  const audit = `/api/v1/audit?database_id=`;

  it('an admin under a policy reads the log and its exports without the quoted value', async () => {
    const listed = await json<{ data: AuditJson[] }>(
      await w.as(policed, 'GET', `${audit}${open.id}&outcome=failed`),
    );
    const failed = listed.data.filter((e) => e.outcome === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.detail).toMatch(/the error is hidden because it may quote values/);
    expect(JSON.stringify(listed)).not.toContain(SSN);

    for (const format of ['ndjson', 'csv']) {
      const exported = await w.as(
        policed,
        'GET',
        `/api/v1/audit/export?format=${format}&database_id=${open.id}`,
      );
      expect(exported.status).toBe(200);
      const text = await exported.text();
      expect(text).toContain('the error is hidden');
      expect(text, format).not.toContain(SSN);
    }

    // A text search does not find the entry through the error it cannot read.
    const probe = await json<{ data: AuditJson[] }>(
      await w.as(policed, 'GET', `${audit}${open.id}&q=${encodeURIComponent(SSN)}`),
    );
    expect(probe.data).toHaveLength(0);

    const s = await signIn(w.svc, policed.email, policed.password);
    const page = await w.svc.fetch(`/audit?database=${open.id}&outcome=failed`, {
      headers: { cookie: s.cookie },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('the error is hidden');
    expect(html).not.toContain(SSN);
  });

  it('the super admin who ran it reads the database’s message', async () => {
    const listed = await json<{ data: AuditJson[] }>(
      await w.as(w.root, 'GET', `${audit}${open.id}&outcome=failed`),
    );
    expect(listed.data[0]!.detail).toContain(`invalid input syntax for type integer: "${SSN}"`);
    const exported = await w.as(w.root, 'GET', `/api/v1/audit/export?format=csv&database_id=${open.id}`);
    expect(await exported.text()).toContain(SSN);
    const found = await json<{ data: AuditJson[] }>(
      await w.as(w.root, 'GET', `${audit}${open.id}&q=${encodeURIComponent(SSN)}`),
    );
    expect(found.data).toHaveLength(1);
  });
});
