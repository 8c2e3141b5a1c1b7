// Shared set-up of the adversarial data-protection suites: a real service (store, API), a real
// target database seeded with secrets, a policy created through the admin API and assigned to
// a member, and `attempt(sql, params)`, which plans the statement as that member and, unless
// refused, runs the planned statement on the real server and redacts the result.
import { expect } from 'vitest';
import { createPoolRegistry, type PoolRegistry } from '../../adapters/index.ts';
import type { ParamValue } from '../../adapters/types.ts';
import { AppError } from '../../core/errors.ts';
import { connectionConfigFor, poolVersion } from '../../governance/connections.ts';
import { planProtection } from '../../governance/protection/index.ts';
import type { QueryActor } from '../../governance/query.ts';
import { createUser } from '../../identity/manage.ts';
import { findCredential, findDatabase } from '../../store/databases.ts';
import { firstOrganization } from '../../store/users.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** Values the policy protects; none may appear in any result, whole or in a telling part. */
export const SECRETS = {
  emails: ['alice.secret@example.com', 'bob.hidden@example.org', 'carol.private@example.net'],
  ssns: ['123-45-6789', '987-65-4321', '555-12-3456'],
  phones: ['+1-555-0101', '+1-555-0202', '+1-555-0303'],
  salaries: [184_321, 97_531, 123_457],
};
/** Fragments that would betray a value even inside a longer string. */
const FRAGMENTS = [
  'alice.secret',
  'bob.hidden',
  'carol.private',
  '45-6789',
  '65-4321',
  '12-3456',
  '555-01',
  '555-02',
  '555-03',
  ...SECRETS.salaries.map(String),
];

/** The policy under test: ids and names shown, email masked, ssn hashed, phone partly shown, salary hidden. */
export const POLICY_RULES = [
  { table: 'users', column: 'id', action: 'show' },
  { table: 'users', column: 'name', action: 'show' },
  { table: 'users', column: 'email', action: 'mask' },
  { table: 'users', column: 'ssn', action: 'hash' },
  { table: 'users', column: 'phone', action: 'partial', keep_first: 0, keep_last: 2 },
  { table: 'orders', column: '*', action: 'show' },
];

/**
 * How a statement ended: refused before it ran, failed on the server (the message as the
 * pipeline reports it, through plan.failure), or ran.
 */
export type Attempt =
  | { refused: string }
  | { failed: string }
  | { columns: string[]; rows: unknown[][]; statement: string; messages: string[] };

export interface ProtectionFixture {
  svc: TestService;
  pools: PoolRegistry;
  databaseId: string;
  member: QueryActor;
  /** An admin with no policy, for the control cases. */
  unprotected: QueryActor;
  /** The policy's hash salt, which nothing a member sees may contain. */
  salt: string;
  attempt(sql: string, params?: ParamValue[], actor?: QueryActor): Promise<Attempt>;
  stop(): Promise<void>;
}

export async function startFixture(registerBody: Record<string, unknown>): Promise<ProtectionFixture> {
  const svc = await startTestService();
  const pools = createPoolRegistry();
  const call = async (method: string, path: string, body: unknown) => {
    const res = await svc.fetch(`/api/v1/desk/databases${path}`, {
      method,
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const db = await call('POST', '', registerBody);
  const databaseId = String(db.id);
  const org = (await firstOrganization(svc.deps.sql))!;
  const memberRow = await createUser(svc.deps.sql, {
    orgId: org.id,
    email: 'member@example.test',
    role: 'member',
    password: null,
  });
  const adminRow = await createUser(svc.deps.sql, {
    orgId: org.id,
    email: 'admin2@example.test',
    role: 'admin',
    password: null,
  });
  const policy = await call('POST', `/${databaseId}/policies`, {
    name: 'pii',
    rules: POLICY_RULES,
    assignments: { roles: ['member'] },
  });
  const [saltRow] = await svc.deps.sql<Array<{ hash_salt: string }>>`
    select hash_salt from data_protection_policies where id = ${String(policy.id)}`;
  const salt = saltRow!.hash_salt;
  const member: QueryActor = { kind: 'user', userId: memberRow.id, role: 'member' };
  const unprotected: QueryActor = { kind: 'user', userId: adminRow.id, role: 'admin' };
  const credentialId = String((db.credentials as Array<{ id: string }>)[0]!.id);
  const deps = { sql: svc.deps.sql, pools, keyring: svc.deps.keyring, logger: svc.deps.logger };

  async function attempt(sql: string, params: ParamValue[] = [], actor = member): Promise<Attempt> {
    const dbRow = (await findDatabase(svc.deps.sql, org.id, databaseId))!;
    const cred = (await findCredential(svc.deps.sql, databaseId, credentialId))!;
    let plan: Awaited<ReturnType<typeof planProtection>>;
    try {
      plan = await planProtection(deps, { orgId: org.id, db: dbRow, cred, actor, statement: sql, params });
    } catch (err) {
      // A refusal is a typed application error with a message for the caller, never a crash.
      expect(err).toBeInstanceOf(AppError);
      expect([403, 422]).toContain((err as AppError).status);
      return { refused: (err as AppError).detail };
    }
    const pool = pools.acquire({ databaseId, credentialId, version: poolVersion(dbRow, cred) }, () =>
      connectionConfigFor(svc.deps.keyring, dbRow, cred),
    );
    let raw: Awaited<ReturnType<typeof pool.execute>>;
    try {
      raw = await pool.execute(plan.statement, plan.params, { maxRows: 1000, timeoutSeconds: 20 });
    } catch (err) {
      // What governance/execute.ts reports of a server error: plan.failure(err).message.
      return { failed: (plan.failure(err) as Error).message };
    }
    const result = plan.redact(raw);
    return {
      columns: result.columns,
      rows: result.rows,
      statement: plan.statement,
      messages: result.messages,
    };
  }

  return {
    svc,
    pools,
    databaseId,
    member,
    unprotected,
    salt,
    attempt,
    async stop() {
      await pools.closeAll();
      await svc.stop();
    },
  };
}

/**
 * Asserts that no protected value, nor a telling fragment of one, is in anything the member
 * sees of the outcome: rows, column names, messages, refusals and server errors; with `salt`,
 * that the policy's salt is in none of them either.
 */
export function expectNoLeak(outcome: Attempt, salt?: string): void {
  const { statement: _, ...seen } = outcome as Attempt & { statement?: string };
  const text = JSON.stringify(seen);
  for (const secret of [...SECRETS.emails, ...SECRETS.ssns, ...SECRETS.phones, ...FRAGMENTS]) {
    expect(text, `outcome leaks ${secret}`).not.toContain(secret);
  }
  if (salt) expect(text, 'outcome shows the salt').not.toContain(salt);
}

/** The outcome with the statement left out (it differs with the guessed value). */
export function observable(outcome: Attempt): unknown {
  if ('refused' in outcome) return { refused: true };
  if ('failed' in outcome) return { failed: outcome.failed };
  return { columns: outcome.columns, rows: outcome.rows };
}

/** The rows of an outcome that ran; a refusal or failure fails the test with its message. */
export function rowsOf(a: Attempt): unknown[][] {
  if ('refused' in a) throw new Error(`refused: ${a.refused}`);
  if ('failed' in a) throw new Error(`failed: ${a.failed}`);
  return a.rows;
}
