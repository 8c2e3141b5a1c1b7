// biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow steps are templates.
// What the workflow data-protection tests share: a workflow service with a PostgreSQL
// and a MariaDB database each holding one person's secrets behind a policy assigned to members
// (email masked, ssn hidden), and people with passwords (pages) and personal tokens (REST).
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startWorkflowEnv, type WorkflowEnv } from './setup.ts';

export const SECRET = { name: 'Ada', email: 'ada.secret@example.com', ssn: '111-22-3333' };

export interface Person {
  userId: string;
  email: string;
  password: string;
  bearer: Record<string, string>;
}

export interface Target {
  engine: 'postgres' | 'mariadb';
  databaseId: string;
  credentialId: string;
  policyId: string;
}

export interface ProtectionWorld {
  env: WorkflowEnv;
  pg: Target;
  maria: Target;
  /** The PostgreSQL database registered a second time with restrict_access (no grants). */
  restricted: { databaseId: string; credentialId: string };
  /** The PostgreSQL database registered once more with no policy: a member reads all of it. */
  open: { databaseId: string; credentialId: string };
  person(role: 'member' | 'admin' | 'super_admin', email: string): Promise<Person>;
  stop(): Promise<void>;
}

export async function startProtectionWorld(
  opts: { env?: Record<string, string> } = {},
): Promise<ProtectionWorld> {
  const suffix = newId('db').slice(-10).toLowerCase();
  const pgName = `wfprot_${suffix}`;
  const pg = servers().postgres;
  const pgConn = { host: pg.host, port: pg.port, user: pg.user, password: pg.password, onnotice: () => {} };
  const admin = postgres({ ...pgConn, database: pg.database, max: 1 });
  try {
    await admin.unsafe(`create database ${pgName}`);
  } finally {
    await admin.end();
  }
  const target = postgres({ ...pgConn, database: pgName, max: 1 });
  try {
    await target`create table people (id int primary key, name text, email text, ssn text)`;
    await target`insert into people values (1, ${SECRET.name}, ${SECRET.email}, ${SECRET.ssn})`;
  } finally {
    await target.end();
  }
  const my = servers().mariadb;
  const myConn = { host: my.host, port: my.port, user: my.user, password: my.password };
  const maria = await mysql.createConnection(myConn);
  try {
    await maria.query(`create database ${pgName}`);
    await maria.query(
      `create table ${pgName}.people (id int primary key, name varchar(50), email varchar(200), ssn varchar(20))`,
    );
    await maria.execute(`insert into ${pgName}.people values (1, ?, ?, ?)`, [
      SECRET.name,
      SECRET.email,
      SECRET.ssn,
    ]);
  } finally {
    await maria.end();
  }

  const env = await startWorkflowEnv(opts);
  const register = async (body: Record<string, unknown>) => {
    const res = await env.api<{ id: string; credentials: Array<{ id: string }> }>(
      'POST',
      '/api/v1/desk/databases',
      body,
    );
    if (res.status !== 201) throw new Error(`database: ${JSON.stringify(res.body)}`);
    return { databaseId: res.body.id, credentialId: res.body.credentials[0]!.id };
  };
  const protect = async (databaseId: string) => {
    const res = await env.api<{ id: string }>('POST', `/api/v1/desk/databases/${databaseId}/policies`, {
      name: 'pii',
      rules: [
        { table: 'people', column: 'id', action: 'show' },
        { table: 'people', column: 'name', action: 'show' },
        { table: 'people', column: 'email', action: 'mask' },
        { table: 'people', column: 'ssn', action: 'hide' },
      ],
      assignments: { roles: ['member'] },
    });
    if (res.status !== 201) throw new Error(`policy: ${JSON.stringify(res.body)}`);
    return res.body.id;
  };
  const cred = (u: { user: string; password: string }) => [
    { username: u.user, password: u.password, reviews_required: 0, default_credential: true },
  ];
  const pgBody = {
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pgName,
    credentials: cred(pg),
  };
  const pgTarget = await register({ name: 'people-pg', ...pgBody });
  const mariaTarget = await register({
    name: 'people-maria',
    adapter: 'mysql',
    hostname: my.host,
    port: my.port,
    database: pgName,
    credentials: cred(my),
  });
  const restricted = await register({ name: 'people-restricted', restrict_access: true, ...pgBody });
  const open = await register({ name: 'people-open', ...pgBody });

  const org = (await firstOrganization(env.svc.deps.sql))!;
  return {
    env,
    pg: { engine: 'postgres', ...pgTarget, policyId: await protect(pgTarget.databaseId) },
    maria: { engine: 'mariadb', ...mariaTarget, policyId: await protect(mariaTarget.databaseId) },
    restricted,
    open,
    async person(role, email) {
      const password = `pw-${newId('usr').slice(-12)}`;
      const user = await createUser(env.svc.deps.sql, { orgId: org.id, email, role, password });
      const { secret } = await createPersonalToken(env.svc.deps.sql, {
        userId: user.id,
        name: 't',
        expiresAt: null,
      });
      return { userId: user.id, email, password, bearer: { authorization: `Bearer ${secret}` } };
    },
    async stop() {
      await env.stop();
      const sql = postgres({ ...pgConn, database: pg.database, max: 1 });
      try {
        await sql.unsafe(`drop database if exists ${pgName} with (force)`);
      } finally {
        await sql.end();
      }
      const m = await mysql.createConnection(myConn);
      try {
        await m.query(`drop database if exists ${pgName}`);
      } finally {
        await m.end();
      }
    },
  };
}
