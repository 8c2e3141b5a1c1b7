// What the governance tests share: a service with pools, people with personal tokens, and
// target databases registered through the API on the harness PostgreSQL and MariaDB.
import { randomBytes } from 'node:crypto';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import type { Role } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';
import { withMy, withPg } from '../helpers/targets.ts';

export interface Person {
  id: string;
  email: string;
  role: Role;
  token: string;
}

export interface World {
  svc: TestService;
  orgId: string;
  /** A fresh table name on both target servers, with rows (1,'a'),(2,'b'),(3,'c'). */
  table: string;
  person(role: Role, name: string): Promise<Person>;
  /** The bootstrap super admin, with a personal token. */
  root: Person;
  /** Calls the API as a person (Bearer) or as the super admin's key (with optional x-act-as-user). */
  as(
    who: Person | 'key',
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response>;
  /** Registers a database through the API (as the key) and returns its JSON. */
  database(
    engine: 'postgres' | 'mariadb',
    extra?: Record<string, unknown>,
    reviews?: number,
    credential?: Record<string, unknown>,
  ): Promise<DatabaseJson>;
  stop(): Promise<void>;
}

export interface DatabaseJson {
  id: string;
  credentials: Array<{ id: string; username: string; reviews_required: number }>;
}

export async function startWorld(options: TestServiceOptions = {}): Promise<World> {
  const svc = await startTestService(options);
  // The pools of the process; the helper may build them itself already.
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  const orgId = org!.id;
  const table = `gov_${randomBytes(5).toString('hex')}`;
  await seedTargets(table);

  let n = 0;
  const person = async (role: Role, name: string): Promise<Person> => {
    const email = `${name}-${++n}@example.test`;
    const user = await createUser(svc.deps.sql, { orgId, email, role, password: null });
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: user.id,
      name: 'test',
      expiresAt: null,
    });
    return { id: user.id, email, role, token: secret };
  };
  const [rootUser] = await svc.deps.sql<
    { id: string }[]
  >`select id from users where email = ${svc.admin.email}`;
  const rootToken = await createPersonalToken(svc.deps.sql, {
    userId: rootUser!.id,
    name: 'root',
    expiresAt: null,
  });
  const root: Person = {
    id: rootUser!.id,
    email: svc.admin.email,
    role: 'super_admin',
    token: rootToken.secret,
  };

  // The bootstrap key is the super admin's; the tests that act for people through it
  // (x-act-as-user) need it marked, which only a super admin in person may do.
  const keyId = `key_${svc.apiKey.split('_')[1]}`;
  const marked = await svc.fetch(`/api/v1/api-keys/${keyId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${root.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ act_as_allowed: true }),
  });
  if (marked.status !== 204) throw new Error(`marking the key failed: ${marked.status}`);

  const as: World['as'] = (who, method, path, body, headers = {}) =>
    svc.fetch(path, {
      method,
      headers: {
        ...(who === 'key' ? { 'x-api-key': svc.apiKey } : { authorization: `Bearer ${who.token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const database: World['database'] = async (engine, extra = {}, reviews = 0, credential = {}) => {
    const s = engine === 'postgres' ? servers().postgres : servers().mariadb;
    const res = await as('key', 'POST', '/api/v1/desk/databases', {
      name: `${engine}-${++n}`,
      adapter: engine === 'postgres' ? 'postgres' : 'mysql',
      hostname: s.host,
      port: s.port,
      database: s.database,
      credentials: [
        {
          username: s.user,
          password: s.password,
          reviews_required: reviews,
          default_credential: true,
          ...credential,
        },
      ],
      ...extra,
    });
    if (res.status !== 201) throw new Error(`database create failed: ${res.status} ${await res.text()}`);
    return (await res.json()) as DatabaseJson;
  };

  return {
    svc,
    orgId,
    table,
    person,
    root,
    as,
    database,
    async stop() {
      await svc.deps.pools.closeAll();
      await svc.stop();
      await dropTargets(table);
    },
  };
}

async function seedTargets(table: string): Promise<void> {
  await withPg(async (sql) => {
    await sql`create table ${sql(table)} (id int primary key, name text)`;
    await sql`insert into ${sql(table)} values (1, 'a'), (2, 'b'), (3, 'c')`;
  });
  await withMy(async (conn) => {
    await conn.query(`create table \`${table}\` (id int primary key, name varchar(20))`);
    await conn.query(`insert into \`${table}\` values (1, 'a'), (2, 'b'), (3, 'c')`);
  });
}

async function dropTargets(table: string): Promise<void> {
  await withPg((sql) => sql`drop table if exists ${sql(table)}`);
  await withMy((conn) => conn.query(`drop table if exists \`${table}\``));
}

/** A query request as the API shows it (the fields the tests read). */
export interface RequestJson {
  id: string;
  status: string;
  revision: number;
  statement: string;
  classification: string;
  run_on_approval: boolean;
  approvals: { valid: string[]; count: number };
  bypass: { bypassed: boolean; reason: string | null; at: string | null };
  result: { command: string; num_rows: number } | null;
  error: string | null;
  reviews: Array<{ user_id: string; verdict: string; current: boolean; comment: string }>;
}

/** POST /query-requests and /:id/run answers. */
export interface SubmitJson {
  status: 'executed' | 'pending_review';
  request: RequestJson | null;
  result: { columns: string[]; rows: unknown[][]; num_rows: number } | null;
}

/** An audit entry as the API shows it. */
export interface AuditJson {
  id: string;
  seq: number;
  actor: { kind: string; user_id: string | null; api_key_id: string | null };
  origin: string;
  database_id: string | null;
  statement: string;
  params: unknown[];
  classification: string | null;
  rows_returned: number | null;
  review: {
    request_id: string | null;
    approved_by: string[];
    bypassed: boolean;
    bypass_reason: string | null;
  };
  outcome: string;
  detail: string | null;
}

/** Reads a JSON body as the shape a test expects. */
export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Polls until `check` returns a value, or fails after `ms`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
