import { DEFAULT_PORTS } from '../adapters/types.ts';
import type { Caller } from '../audit/actors.ts';
import { type FieldError, notFound } from '../core/errors.ts';
import { listableCredentials } from '../governance/access.ts';
import { LARGE_WRITE_ROWS } from '../governance/preview/risk.ts';
import { canSee, type QueryActor } from '../governance/query.ts';
import type { Keyring } from '../store/crypto.ts';
import {
  type CredentialRow,
  type DatabaseFields,
  type DatabaseRow,
  DEFAULT_UNDO_MAX_ROWS,
  deleteCredential,
  deleteDatabase as deleteDatabaseRow,
  findDatabase,
  findDatabaseByApiId,
  insertCredential,
  insertDatabase,
  listCredentials,
  listDatabases as listDatabaseRows,
  updateCredential,
  updateDatabase,
} from '../store/databases.ts';
import type { Sql, Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { checkAgentReference } from './agents.ts';
import { auditDatabaseChange } from './database-audit.ts';
import type { CreateDatabaseInput, PatchDatabaseInput, SetupDatabaseInput } from './database-input.ts';
import { checkInvariants, type NewCredential, planCredentials } from './database-rules.ts';

export interface DatabaseDeps {
  sql: Sql;
  keyring: Keyring;
  /** Closes the pools of a database whose settings changed or that is gone. */
  pools: { invalidate(databaseId: string): Promise<void> };
}

export interface DatabaseWithCredentials {
  db: DatabaseRow;
  credentials: CredentialRow[];
}

/** Registers a database with its credentials (SPEC.md 4.2 POST). */
export async function createDatabase(
  deps: DatabaseDeps,
  caller: Caller,
  input: CreateDatabaseInput,
): Promise<DatabaseWithCredentials> {
  const { orgId, actor } = caller;
  const defaults = input.credentials.filter((c) => c.default_credential).length;
  const fields: DatabaseFields = {
    api_id: null,
    name: input.name,
    adapter: input.adapter,
    hostname: input.hostname,
    port: input.port ?? DEFAULT_PORTS[input.adapter],
    database: input.database,
    ssl: input.ssl ?? false,
    verify_server_hostname: input.verify_server_hostname ?? false,
    ssl_ca_cert: input.ssl_ca_cert ?? null,
    ssl_client_cert: input.ssl_cert ?? null,
    ssl_client_key_enc: null,
    restrict_access: input.restrict_access ?? false,
    review_bypass_allowed: input.review_bypass_allowed ?? false,
    group_name: input.group ?? null,
    slack_channel: input.slack_channel ?? null,
    agent_id: input.agent_id ?? null,
    ai_enabled: input.ai_enabled ?? false,
    ai_max_rows: input.ai_max_rows ?? 500,
  };
  const creds = input.credentials.map((c, i) => ({
    username: c.username,
    password: c.password,
    hostname: c.hostname ?? null,
    ai_allowed: c.ai_allowed ?? false,
    timeout: c.timeout ?? null,
    reviews_required: c.reviews_required ?? 0,
    restrict_access: c.restrict_access ?? false,
    justification_required: c.justification_required ?? false,
    large_write_rows: c.large_write_rows ?? LARGE_WRITE_ROWS,
    risk_reviews: c.risk_reviews ?? {},
    undo_max_rows: c.undo_max_rows ?? DEFAULT_UNDO_MAX_ROWS,
    // With none marked, the first credential is the default one.
    default_credential: defaults === 0 ? i === 0 : (c.default_credential ?? false),
  }));
  checkInvariants(fields, creds, input.ssl_key ?? null);
  await checkAgentReference(deps.sql, orgId, fields.agent_id);
  return deps.sql.begin(async (tx) => {
    const id = newId('db');
    const db = await insertDatabase(tx, id, orgId, {
      ...fields,
      ssl_client_key_enc: input.ssl_key ? deps.keyring.encrypt(input.ssl_key, id) : null,
    });
    const credentials: CredentialRow[] = [];
    for (const c of creds) credentials.push(await insertCredentialSealed(tx, deps.keyring, db.id, c));
    await auditDatabaseChange(tx, orgId, actor, null, { db, credentials });
    return { db, credentials };
  });
}

/**
 * PATCH semantics of `credentials` (README): an entry with `id` updates that credential (a
 * password only when given), one without `id` creates a credential, `{id, delete: true}`
 * removes one; credentials left out are kept unchanged.
 */
export async function patchDatabase(
  deps: DatabaseDeps,
  caller: Caller,
  id: string,
  input: PatchDatabaseInput,
): Promise<DatabaseWithCredentials> {
  const { orgId, actor } = caller;
  const result = await deps.sql.begin(async (tx) => {
    const current = await visibleDatabase(tx, orgId, actor, id);
    const existing = await listCredentials(tx, [id]);
    const changes: Partial<DatabaseFields> = {};
    const set = <K extends keyof DatabaseFields>(key: K, value: DatabaseFields[K] | undefined) => {
      if (value !== undefined) changes[key] = value;
    };
    set('name', input.name);
    set('adapter', input.adapter);
    set('hostname', input.hostname);
    set('database', input.database);
    set(
      'port',
      input.port ??
        (input.adapter && input.adapter !== current.adapter && current.port === DEFAULT_PORTS[current.adapter]
          ? DEFAULT_PORTS[input.adapter]
          : undefined),
    );
    set('ssl', input.ssl);
    set('verify_server_hostname', input.verify_server_hostname);
    set('ssl_ca_cert', input.ssl_ca_cert);
    set('ssl_client_cert', input.ssl_cert);
    if (input.ssl_key !== undefined)
      changes.ssl_client_key_enc = input.ssl_key === null ? null : deps.keyring.encrypt(input.ssl_key, id);
    set('restrict_access', input.restrict_access);
    set('review_bypass_allowed', input.review_bypass_allowed);
    set('group_name', input.group);
    set('slack_channel', input.slack_channel);
    set('agent_id', input.agent_id);
    set('ai_enabled', input.ai_enabled);
    set('ai_max_rows', input.ai_max_rows);

    // Work out the final credential set first, so the invariants are checked before any write.
    const errors: FieldError[] = [];
    const plan = planCredentials(existing, input.credentials ?? [], errors);
    const merged = { ...current, ...changes };
    const keyPresent = input.ssl_key !== undefined ? input.ssl_key : current.ssl_client_key_enc;
    checkInvariants(merged, plan.final, keyPresent, errors);
    await checkAgentReference(tx, orgId, input.agent_id);

    const db = await updateDatabase(tx, id, changes);
    for (const removed of plan.deletes) await deleteCredential(tx, removed);
    // Clear defaults first so the one-default index never sees two at once.
    for (const u of plan.updates)
      if (u.fields.default_credential === false)
        await updateCredential(tx, u.id, { default_credential: false });
    for (const u of plan.updates) {
      const { password, ...rest } = u.fields;
      await updateCredential(tx, u.id, {
        ...rest,
        ...(password !== undefined ? { password_enc: deps.keyring.encrypt(password, u.id) } : {}),
      });
    }
    for (const c of plan.creates) await insertCredentialSealed(tx, deps.keyring, id, c);
    const after = { db, credentials: await listCredentials(tx, [id]) };
    const secrets = [
      ...(input.ssl_key !== undefined ? ['ssl_key'] : []),
      ...plan.updates
        .filter((u) => u.fields.password !== undefined)
        .map((u) => `credential ${u.id} password`),
    ];
    await auditDatabaseChange(tx, orgId, actor, { db: current, credentials: existing }, after, secrets);
    return after;
  });
  await deps.pools.invalidate(id);
  return result;
}

async function insertCredentialSealed(
  tx: Tx,
  keyring: Keyring,
  databaseId: string,
  c: NewCredential,
): Promise<CredentialRow> {
  const id = newId('crd');
  const { password, ...rest } = c;
  return insertCredential(tx, id, databaseId, { ...rest, password_enc: keyring.encrypt(password, id) });
}

/**
 * PUT /setup (SPEC.md 4.2): upsert by API id. Setup is declarative: the request is the whole
 * desired state, so omitted optional settings return to their defaults (SPEC: review_bypass_allowed
 * "reverts to false when omitted"), and the default credential takes the given username,
 * password and reviews_required.
 */
export async function setupDatabase(
  deps: DatabaseDeps,
  caller: Caller,
  input: SetupDatabaseInput,
): Promise<DatabaseWithCredentials> {
  const { orgId, actor } = caller;
  const result = await deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`setup:${orgId}:${input.id}`}))`;
    const existing = await findDatabaseByApiId(tx, orgId, input.id);
    const id = existing?.id ?? newId('db');
    const fields: DatabaseFields = {
      api_id: input.id,
      name: input.name ?? input.database,
      adapter: input.adapter,
      hostname: input.hostname,
      port: input.port ?? DEFAULT_PORTS[input.adapter],
      database: input.database,
      ssl: input.ssl === 'enabled',
      verify_server_hostname: existing?.verify_server_hostname === true && Boolean(input.ssl_ca_cert),
      ssl_ca_cert: input.ssl_ca_cert ?? null,
      ssl_client_cert: input.ssl_cert ?? null,
      ssl_client_key_enc: input.ssl_key ? deps.keyring.encrypt(input.ssl_key, id) : null,
      restrict_access: existing?.restrict_access ?? false,
      review_bypass_allowed: input.review_bypass_allowed,
      group_name: input.group ?? null,
      slack_channel: existing?.slack_channel ?? null,
      agent_id: input.agent_id ?? null,
      ai_enabled: existing?.ai_enabled ?? false,
      ai_max_rows: existing?.ai_max_rows ?? 500,
    };
    checkInvariants(fields, [{ username: input.username, default_credential: true }], input.ssl_key ?? null);
    await checkAgentReference(tx, orgId, fields.agent_id);
    const cred = {
      username: input.username,
      password: input.password,
      hostname: null,
      ai_allowed: false,
      timeout: null,
      reviews_required: input.reviews_required,
      default_credential: true,
      restrict_access: false,
      justification_required: false,
      large_write_rows: LARGE_WRITE_ROWS,
      risk_reviews: {},
      undo_max_rows: DEFAULT_UNDO_MAX_ROWS,
    };
    if (!existing) {
      const db = await insertDatabase(tx, id, orgId, fields);
      const created = { db, credentials: [await insertCredentialSealed(tx, deps.keyring, id, cred)] };
      await auditDatabaseChange(tx, orgId, actor, null, created);
      return created;
    }
    const creds = await listCredentials(tx, [id]);
    const db = await updateDatabase(tx, id, fields);
    const target =
      creds.find((c) => c.default_credential) ?? creds.find((c) => c.username === input.username);
    const clash = creds.find((c) => c.username === input.username && c.id !== target?.id);
    if (clash) await deleteCredential(tx, clash.id);
    if (target) {
      await updateCredential(tx, target.id, {
        username: input.username,
        password_enc: deps.keyring.encrypt(input.password, target.id),
        reviews_required: input.reviews_required,
        default_credential: true,
      });
    } else {
      await insertCredentialSealed(tx, deps.keyring, id, cred);
    }
    const after = { db, credentials: await listCredentials(tx, [id]) };
    // Setup always sends the password (and a key, if any): they count as set again.
    const secrets = [
      ...(input.ssl_key ? ['ssl_key'] : []),
      ...(target ? [`credential ${target.id} password`] : []),
    ];
    await auditDatabaseChange(tx, orgId, actor, { db: existing, credentials: creds }, after, secrets);
    return after;
  });
  await deps.pools.invalidate(result.db.id);
  return result;
}

export async function getDatabase(sql: Tx, caller: Caller, id: string): Promise<DatabaseWithCredentials> {
  const { orgId, actor } = caller;
  const db = await visibleDatabase(sql, orgId, actor, id);
  return { db, credentials: await listableCredentials(sql, actor, await listCredentials(sql, [db.id])) };
}

/** Deletes a database, its credentials and grants; returns what was deleted (SPEC.md 4.2). */
export async function deleteDatabase(
  deps: DatabaseDeps,
  caller: Caller,
  id: string,
): Promise<DatabaseWithCredentials> {
  const { orgId, actor } = caller;
  const gone = await deps.sql.begin(async (tx) => {
    const found = await getDatabase(tx, caller, id);
    const all = { db: found.db, credentials: await listCredentials(tx, [id]) };
    await deleteDatabaseRow(tx, id);
    await auditDatabaseChange(tx, orgId, actor, all, null);
    return found;
  });
  await deps.pools.invalidate(id);
  return gone;
}

export async function removeByApiId(
  deps: DatabaseDeps,
  caller: Caller,
  apiId: string,
): Promise<DatabaseWithCredentials> {
  const db = await findDatabaseByApiId(deps.sql, caller.orgId, apiId);
  if (!db) throw notFound('no database with that API id');
  return deleteDatabase(deps, caller, db.id);
}

export async function listDatabases(
  sql: Tx,
  caller: Caller,
  opts: { group?: string | undefined; after?: string | undefined; limit: number },
): Promise<{ items: DatabaseWithCredentials[]; nextCursor: string | null }> {
  const { orgId, actor } = caller;
  const visibleTo = actor.kind === 'user' && actor.role !== 'super_admin' ? actor.userId : null;
  const rows = await listDatabaseRows(sql, orgId, { ...opts, limit: opts.limit + 1, visibleTo });
  const page = rows.slice(0, opts.limit);
  const creds = await listableCredentials(
    sql,
    actor,
    await listCredentials(
      sql,
      page.map((d) => d.id),
    ),
  );
  return {
    items: page.map((db) => ({ db, credentials: creds.filter((c) => c.database_id === db.id) })),
    nextCursor: rows.length > opts.limit ? page[page.length - 1]!.id : null,
  };
}

async function visibleDatabase(sql: Tx, orgId: string, actor: QueryActor, id: string): Promise<DatabaseRow> {
  const db = await findDatabase(sql, orgId, id);
  if (!db || !(await canSee(sql, db, actor))) throw notFound('no such database');
  return db;
}
