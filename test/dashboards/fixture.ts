// biome-ignore-all lint/suspicious/noTemplateCurlyInString: panel queries and workflow steps are templates.
// What the dashboard API and browser tests share: a real service with a Temporal worker, a
// PostgreSQL database of its own holding customers (email masked for members by a
// data-protection policy), a credential that needs no review and one that needs one, two
// workflows (one plain, one with an approval step), and people with passwords and tokens.
import postgres from 'postgres';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startWorkflowEnv, type WorkflowEnv } from '../workflows/setup.ts';

export interface Person {
  userId: string;
  email: string;
  password: string;
  bearer: Record<string, string>;
}

export interface DashboardWorld {
  env: WorkflowEnv;
  databaseId: string;
  /** reviews_required 0 (default credential) and 1. */
  credentials: { open: string; reviewed: string };
  /** Inputs customer_id (integer) and note (string); one query step echoing them. */
  refundWorkflowId: string;
  /** The same inputs, waiting for an admin's approval before its query step. */
  approvalWorkflowId: string;
  member: Person;
  admin: Person;
  superAdmin: Person;
  /** Calls the API as a person (Bearer) or with the bootstrap API key. */
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    as?: Person,
  ): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export const CUSTOMERS = [
  { id: 1, name: 'Ada', email: 'ada.private@example.com' },
  { id: 2, name: 'Grace', email: 'grace.private@example.com' },
];

export async function startDashboardWorld(): Promise<DashboardWorld> {
  const pg = servers().postgres;
  const dbName = `dash_${newId('db').slice(-10).toLowerCase()}`;
  // A second login role for the credential that needs reviews (usernames are unique per database).
  const reviewer = { user: `${dbName}_rv`, password: `pw_${newId('key').slice(-16)}` };
  const admin = postgres({ ...connection(pg), database: pg.database, max: 1 });
  try {
    await admin.unsafe(`create database ${dbName}`);
    await admin.unsafe(`create role ${reviewer.user} login password '${reviewer.password}'`);
  } finally {
    await admin.end();
  }
  const target = postgres({ ...connection(pg), database: dbName, max: 1 });
  try {
    await target`create table customers (id int primary key, name text not null, email text not null)`;
    await target.unsafe(`grant select on customers to ${reviewer.user}`);
    for (const c of CUSTOMERS) await target`insert into customers values (${c.id}, ${c.name}, ${c.email})`;
  } finally {
    await target.end();
  }

  const env = await startWorkflowEnv();
  const call: DashboardWorld['call'] = (method, path, body, as) =>
    env.api(method, path, body, as ? as.bearer : undefined) as never;
  const db = await env.api<{ id: string; credentials: Array<{ id: string; reviews_required: number }> }>(
    'POST',
    '/api/v1/desk/databases',
    {
      name: 'Customers',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: dbName,
      review_bypass_allowed: true,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        {
          username: reviewer.user,
          password: reviewer.password,
          reviews_required: 1,
          default_credential: false,
        },
      ],
    },
  );
  if (db.status !== 201) throw new Error(`database: ${JSON.stringify(db.body)}`);
  const creds = db.body.credentials;
  const policy = await env.api('POST', `/api/v1/desk/databases/${db.body.id}/policies`, {
    name: 'customer pii',
    rules: [
      { table: 'customers', column: 'id', action: 'show' },
      { table: 'customers', column: 'name', action: 'show' },
      { table: 'customers', column: 'email', action: 'mask' },
    ],
    assignments: { roles: ['member'] },
  });
  if (policy.status !== 201) throw new Error(`policy: ${JSON.stringify(policy.body)}`);

  const inputs = [
    { key: 'customer_id', description: 'Customer', type: 'integer' },
    { key: 'note', description: 'Why', type: 'string' },
  ];
  const echo = {
    name: 'lookup',
    action: {
      __type__: 'query',
      credential_id: env.db.credentialId,
      query: 'select ${customer_id}::int as id, ${note}::text as note',
    },
  };
  const refund = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'Refund customer',
    inputs,
    steps: [echo],
  });
  const approval = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'Close account',
    inputs,
    steps: [
      {
        name: 'sign_off',
        action: { __type__: 'approval', reviews_required: 1 },
        permissions: [{ role: 'admin' }],
      },
      echo,
    ],
  });
  if (refund.status !== 201 || approval.status !== 201)
    throw new Error(`workflows: ${JSON.stringify([refund.body, approval.body])}`);

  const org = (await firstOrganization(env.svc.deps.sql))!;
  const person = async (role: 'member' | 'admin' | 'super_admin', email: string): Promise<Person> => {
    const password = `pw-${newId('usr').slice(-12)}`;
    const user = await createUser(env.svc.deps.sql, { orgId: org.id, email, role, password });
    const { secret } = await createPersonalToken(env.svc.deps.sql, {
      userId: user.id,
      name: 't',
      expiresAt: null,
    });
    return { userId: user.id, email, password, bearer: { authorization: `Bearer ${secret}` } };
  };
  return {
    env,
    databaseId: db.body.id,
    credentials: {
      open: creds.find((c) => c.reviews_required === 0)!.id,
      reviewed: creds.find((c) => c.reviews_required === 1)!.id,
    },
    refundWorkflowId: refund.body.id,
    approvalWorkflowId: approval.body.id,
    member: await person('member', 'mia.member@example.test'),
    admin: await person('admin', 'adam.admin@example.test'),
    superAdmin: await person('super_admin', 'sue.super@example.test'),
    call,
    async stop() {
      await env.stop();
      const sql = postgres({ ...connection(pg), database: pg.database, max: 1 });
      try {
        await sql.unsafe(`drop database if exists ${dbName} with (force)`);
        await sql.unsafe(`drop role if exists ${reviewer.user}`);
      } finally {
        await sql.end();
      }
    },
  };
}

function connection(pg: ReturnType<typeof servers>['postgres']) {
  return { host: pg.host, port: pg.port, user: pg.user, password: pg.password, onnotice: () => {} };
}
