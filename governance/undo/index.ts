// Undo of an approved write (governance/README.md "Undo"). Before an approved UPDATE or DELETE
// commits, the rows it touches are read in its transaction and kept, sealed with the service
// keyring as credentials are; an executed request then offers Undo, which opens a NEW request
// holding the inverse statement, reviewed like any write. The kept values never appear in a
// statement, a request, a preview or the audit log: the inverse binds them as its one parameter
// when it runs, and everyone else sees only how many rows it puts back.
import type { ParamValue } from '../../adapters/types.ts';
import { recordEvent } from '../../audit/events.ts';
import { conflict, forbidden } from '../../core/errors.ts';
import type { CredentialRow, DatabaseRow } from '../../store/databases.ts';
import { newId } from '../../store/ids.ts';
import {
  findRequest,
  insertRequest,
  insertRevision,
  type QueryRequestRow,
} from '../../store/query-requests.ts';
import { type BackupRow, findBackup, insertBackup } from '../../store/request-backups.ts';
import { resolveTarget } from '../access.ts';
import { QueryDeniedError } from '../errors.ts';
import type { Execution } from '../execute.ts';
import { encodeParams } from '../params.ts';
import { requirementFor } from '../risk-rules.ts';
import { protectionRefusal } from '../submit-check.ts';
import type { GovernanceDeps, QueryActor, QueryOrigin } from '../types.ts';
import { backupStep, undoPlan } from './plan.ts';
import { inverseStatement, type SavedWrite, savedRowsDocument } from './statements.ts';

const DEFAULT_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/** What a reviewer is told about undo before approving a write. */
export interface UndoState {
  available: boolean;
  /** Why undo is unavailable, or what an undo request puts back. */
  note: string | null;
  /** Rows the credential keeps for undo at most. */
  max_rows: number;
}

const sealContext = (requestId: string) => `request-backup:${requestId}`;

/**
 * Undo as the reviewers of a pending write see it, given the rows its preview counted. When the
 * count is above the credential's limit the request records it: the write then runs without its
 * rows kept, as its reviewers were told, and only then (request-run.ts).
 */
export async function undoState(
  deps: GovernanceDeps,
  request: QueryRequestRow,
  db: DatabaseRow,
  cred: CredentialRow,
  count: number | null,
): Promise<UndoState> {
  const max = cred.undo_max_rows;
  if (request.undo_of)
    return {
      available: false,
      note: `this request undoes ${request.undo_of}; it has no undo of its own`,
      max_rows: max,
    };
  const plan = await undoPlan(deps, db, cred, request.statement);
  let note = plan.kind === 'none' ? plan.reason : null;
  if (!note && count !== null && count > max)
    note = `it would touch ${count} rows; this credential keeps at most ${max} for undo`;
  if (note && plan.kind === 'backup' && request.undo_unavailable_revision !== request.revision)
    await deps.sql`
      update query_requests set undo_unavailable_revision = ${request.revision}, undo_note = ${note}
       where id = ${request.id} and revision = ${request.revision}`;
  return note
    ? { available: false, note: `undo unavailable: ${note}`, max_rows: max }
    : { available: true, note: null, max_rows: max };
}

/**
 * What running `r` needs for undo: the backup step of a write that can be undone, or the kept
 * rows an undo request binds. A write whose rows cannot be kept runs without them only when its
 * reviewers were told so: a limit crossed since then fails it instead (adapter code BACKUP_LIMIT).
 */
export async function undoExecution(
  deps: GovernanceDeps,
  r: QueryRequestRow,
  db: DatabaseRow,
  cred: CredentialRow,
  runner: QueryActor,
  params: ParamValue[],
): Promise<Pick<Execution, 'backup' | 'secretParams'> & { done?: (rows: number) => Promise<void> }> {
  if (r.classification !== 'write') return {};
  if (r.undo_of) {
    const backup = await findBackup(deps.sql, r.org_id, r.undo_of);
    if (!backup)
      throw new QueryDeniedError(`the rows kept for ${r.undo_of} have expired; nothing can be put back`);
    // The kept rows are bound only to the inverse built from them, never to any other statement.
    if (r.statement !== inverseStatement(db.adapter, savedWrite(backup)))
      throw new QueryDeniedError('this undo request no longer holds the inverse of its write');
    const json = deps.keyring.decrypt(backup.rows_enc, sealContext(backup.request_id));
    return {
      secretParams: [json],
      done: (rows) =>
        recordEvent(deps.sql, {
          orgId: r.org_id,
          actor: runner,
          origin: 'user',
          event: 'query_request.undo_executed',
          subject: { request_id: r.id, undo_of: backup.request_id, rows },
          databaseId: r.database_id,
          outcome: 'allowed',
          detail: `undo of ${backup.request_id}: ${rows} row(s) put back`,
        }).then(() => undefined),
    };
  }
  if (r.undo_unavailable_revision === r.revision) return {};
  const plan = await undoPlan(deps, db, cred, r.statement);
  if (plan.kind === 'none') return {};
  const days = deps.config?.undoRetentionDays ?? DEFAULT_RETENTION_DAYS;
  // Runs while the write runs (adapters/backup.ts): the rows and the record that they were kept
  // (a count, never a value) in one store transaction, committed only once the write ran. Until
  // then it holds a store connection, and the request row's key lock of the backup's reference.
  const save = async (rows: unknown[][], written: Promise<boolean>) => {
    const doc = savedRowsDocument(db.adapter, plan.write, rows);
    const expires = new Date(Date.now() + days * DAY_MS);
    const sealed = deps.keyring.encrypt(doc.json, sealContext(r.id));
    await deps.sql.begin(async (tx) => {
      await insertBackup(tx, {
        request_id: r.id,
        org_id: r.org_id,
        revision: r.revision,
        verb: plan.write.verb,
        relation_schema: plan.write.schema,
        relation_name: plan.write.name,
        key_columns: plan.write.keys,
        columns: plan.write.columns,
        assigned: plan.write.assigned,
        row_count: doc.count,
        rows_enc: sealed,
        expires_at: expires,
      });
      // A write that failed keeps nothing: the throw rolls this transaction back. Waited for
      // before the audit event, whose append locks the chain's head until this commits.
      if (!(await written)) throw new Error('the write did not run; its rows are not kept');
      await recordEvent(tx, {
        orgId: r.org_id,
        actor: runner,
        origin: 'user',
        event: 'query_request.backup_saved',
        subject: {
          request_id: r.id,
          revision: r.revision,
          rows: doc.count,
          expires_at: expires.toISOString(),
        },
        databaseId: r.database_id,
        outcome: 'allowed',
        detail: `${doc.count} row(s) of ${plan.write.schema}.${plan.write.name} kept for undo until ${expires.toISOString()}`,
      });
    });
  };
  return { backup: backupStep(plan, params, cred.undo_max_rows, save) };
}

/** Whether an executed request can be undone now: how many rows were kept, until when. */
export interface UndoOffer {
  available: boolean;
  rows: number | null;
  expires_at: string | null;
  note: string | null;
  /** The request that undoes this one, when there is one. */
  undone_by?: string | null;
}

/** Whether an executed request can be undone now, for the review page and the API. */
export async function undoOffer(deps: GovernanceDeps, request: QueryRequestRow): Promise<UndoOffer> {
  if (request.status !== 'executed' || request.undo_of)
    return { available: false, rows: null, expires_at: null, note: null };
  const [open] = await deps.sql<Array<{ id: string }>>`
    select id from query_requests
     where undo_of = ${request.id} and status not in ('rejected', 'canceled', 'failed') limit 1`;
  if (open)
    return {
      available: false,
      rows: null,
      expires_at: null,
      note: `undone by ${open.id}`,
      undone_by: open.id,
    };
  const backup = await findBackup(deps.sql, request.org_id, request.id);
  if (!backup)
    return {
      available: false,
      rows: null,
      expires_at: null,
      note: request.undo_note ?? 'no rows were kept for this request, or they have expired',
    };
  return { available: true, rows: backup.row_count, expires_at: backup.expires_at.toISOString(), note: null };
}

/**
 * Opens the undo of an executed request: a new pending request, authored by `caller`, holding
 * the inverse statement; the kept rows stay sealed until it runs. It needs the same access as
 * submitting the statement, and data protection judges it for its author as any submission.
 */
export async function requestUndo(
  deps: GovernanceDeps,
  orgId: string,
  caller: { actor: QueryActor; origin: QueryOrigin },
  original: QueryRequestRow,
): Promise<QueryRequestRow> {
  const { actor } = caller;
  if (actor.kind !== 'user') throw forbidden('an undo request needs a person as its author');
  if (original.status !== 'executed' || original.undo_of)
    throw conflict(
      `a ${original.undo_of ? 'request that undoes another' : `${original.status} request`} cannot be undone`,
    );
  const backup = await findBackup(deps.sql, orgId, original.id);
  if (!backup)
    throw conflict(original.undo_note ?? 'no rows were kept for this request, or they have expired');
  const { db, cred, policyId } = await resolveTarget(deps.sql, {
    orgId,
    actor,
    databaseId: original.database_id,
    credentialId: original.credential_id,
  });
  const statement = inverseStatement(db.adapter, savedWrite(backup));
  const refusal = await protectionRefusal(deps, {
    orgId,
    db,
    cred,
    actor,
    policyId,
    statement,
    params: ['[]'],
    restoresKeptRows: true,
  });
  if (refusal) throw refusal;
  // An undo touches the rows the original touched: it needs the reviews of the original's level.
  const need = requirementFor(
    cred,
    original.risk_level ? { level: original.risk_level, why: `undoes a ${original.risk_level} write` } : null,
  );
  const request = await deps.sql
    .begin(async (tx) => {
      // One undo at a time: the original is locked while its undo is opened.
      await findRequest(tx, orgId, original.id, { forUpdate: true });
      const row = await insertRequest(tx, {
        id: newId('qr'),
        org_id: orgId,
        database_id: db.id,
        credential_id: cred.id,
        author_user_id: actor.userId,
        author_api_key_id: actor.viaApiKeyId ?? null,
        origin: caller.origin,
        ai_client_id: null,
        ai_client_name: null,
        statement,
        params: encodeParams([]),
        classification: 'write',
        reviews_required: need.reviews_required,
        risk_level: need.level,
        risk_why: need.why,
        approver_role: need.approver_role,
        run_on_approval: false,
        justification: `undo of ${original.id}: puts back ${backup.row_count} row(s) of ${backup.relation_schema}.${backup.relation_name}`,
        status: 'pending',
        bypassed: false,
        bypass_reason: null,
        bypassed_at: null,
        undo_of: original.id,
      });
      await insertRevision(tx, { requestId: row.id, revision: row.revision, statement, params: row.params });
      await recordEvent(tx, {
        orgId,
        actor,
        origin: caller.origin,
        event: 'query_request.undo_requested',
        subject: { request_id: row.id, undo_of: original.id, rows: backup.row_count },
        databaseId: db.id,
        outcome: 'allowed',
        detail: `undo of ${original.id} requested: ${backup.row_count} row(s) to put back`,
      });
      return row;
    })
    .catch((err: unknown) => {
      if ((err as { code?: string }).code === '23505')
        throw conflict(`an undo of ${original.id} is already open or done`);
      throw err;
    });
  deps.notify?.requestOpened(request, db);
  return request;
}

/** What an undo request's preview says: how many rows it puts back, never their values. */
export async function undoPreviewNote(
  deps: GovernanceDeps,
  request: QueryRequestRow,
): Promise<{ count: number | null; note: string }> {
  const backup = request.undo_of ? await findBackup(deps.sql, request.org_id, request.undo_of) : null;
  if (!backup) return { count: null, note: `the rows kept for ${request.undo_of} have expired` };
  const what = backup.verb === 'DELETE' ? 'inserts again' : `sets ${backup.assigned.join(', ')} back on`;
  return {
    count: backup.row_count,
    note: `undo of ${backup.request_id}: ${what} the ${backup.row_count} row(s) of ${backup.relation_schema}.${backup.relation_name} kept before it ran, by ${backup.key_columns.join(', ')}; the kept values are sealed and not shown`,
  };
}

function savedWrite(b: BackupRow): SavedWrite {
  return {
    verb: b.verb,
    schema: b.relation_schema,
    name: b.relation_name,
    keys: b.key_columns,
    columns: b.columns,
    assigned: b.assigned,
  };
}
