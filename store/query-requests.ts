import type { Tx } from './db.ts';

export type RequestStatus =
  | 'pending'
  | 'approved'
  | 'rejected'
  | 'canceled'
  | 'executing'
  | 'executed'
  | 'failed';

/** A query request (store/migrations/0004_governance.sql; life cycle in governance/README.md). */
export interface QueryRequestRow {
  id: string;
  org_id: string;
  database_id: string;
  credential_id: string;
  author_user_id: string;
  author_api_key_id: string | null;
  origin: 'user' | 'dashboard' | 'workflow' | 'ai';
  ai_client_id: string | null;
  ai_client_name: string | null;
  statement: string;
  /** Tagged JSON parameters (governance/params.ts). */
  params: unknown;
  classification: 'read' | 'write';
  revision: number;
  reviews_required: number;
  status: RequestStatus;
  run_on_approval: boolean;
  bypassed: boolean;
  bypass_reason: string | null;
  bypassed_at: Date | null;
  result_command: string | null;
  result_rows: number | null;
  error: string | null;
  executed_at: Date | null;
  /** Why the author needs this query, when the credential asks for it. */
  justification: string | null;
  /** The write's risk level when last assessed (submission, edit); null for a read. */
  risk_level: 'ddl' | 'no_where' | 'large' | 'ordinary' | null;
  risk_why: string | null;
  /** Only approvals of people holding this role (or a higher one) count; null: anyone eligible. */
  approver_role: 'admin' | 'super_admin' | null;
  /** An undo request: the executed request whose saved rows it puts back (governance/undo/). */
  undo_of: string | null;
  /** The revision whose preview said undo is unavailable (too many rows), so it runs without backup. */
  undo_unavailable_revision: number | null;
  undo_note: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ReviewRow {
  id: string;
  request_id: string;
  user_id: string;
  via_api_key_id: string | null;
  revision: number;
  verdict: 'approve' | 'reject' | 'comment';
  body: string;
  created_at: Date;
}

export type RequestInsert = Omit<
  QueryRequestRow,
  | 'revision'
  | 'result_command'
  | 'result_rows'
  | 'error'
  | 'executed_at'
  | 'created_at'
  | 'updated_at'
  | 'undo_of'
  | 'undo_unavailable_revision'
  | 'undo_note'
> & { undo_of?: string | null };

/** Columns a transition may change. */
export type RequestChanges = Partial<
  Pick<
    QueryRequestRow,
    | 'statement'
    | 'params'
    | 'classification'
    | 'revision'
    | 'reviews_required'
    | 'risk_level'
    | 'risk_why'
    | 'approver_role'
    | 'status'
    | 'run_on_approval'
    | 'bypassed'
    | 'bypass_reason'
    | 'bypassed_at'
    | 'result_command'
    | 'result_rows'
    | 'error'
    | 'executed_at'
    | 'undo_unavailable_revision'
    | 'undo_note'
  >
>;

const CHANGE_COLUMNS = [
  'statement',
  'params',
  'classification',
  'revision',
  'reviews_required',
  'risk_level',
  'risk_why',
  'approver_role',
  'status',
  'run_on_approval',
  'bypassed',
  'bypass_reason',
  'bypassed_at',
  'result_command',
  'result_rows',
  'error',
  'executed_at',
  'undo_unavailable_revision',
  'undo_note',
] as const satisfies readonly (keyof RequestChanges)[];

export async function insertRequest(sql: Tx, r: RequestInsert): Promise<QueryRequestRow> {
  const [row] = await sql<QueryRequestRow[]>`
    insert into query_requests ${sql({ ...r, params: sql.json(r.params as never) })} returning *`;
  return row!;
}

/** The request, locked for the rest of the transaction when `forUpdate` (every transition does). */
export async function findRequest(
  sql: Tx,
  orgId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<QueryRequestRow | null> {
  const [row] = await sql<QueryRequestRow[]>`
    select * from query_requests where id = ${id} and org_id = ${orgId}
    ${opts.forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

export async function updateRequest(sql: Tx, id: string, changes: RequestChanges): Promise<QueryRequestRow> {
  const columns = CHANGE_COLUMNS.filter((c) => c in changes);
  const values = 'params' in changes ? { ...changes, params: sql.json(changes.params as never) } : changes;
  const [row] = await sql<QueryRequestRow[]>`
    update query_requests set ${sql(values, ...columns)}, updated_at = now() where id = ${id} returning *`;
  return row!;
}

/** Moves the request to `to` only if it is still in `from` at `revision` (one runner wins, an edit voids). */
export async function claimRequest(
  sql: Tx,
  id: string,
  from: RequestStatus[],
  to: RequestStatus,
  revision: number,
): Promise<QueryRequestRow | null> {
  const [row] = await sql<QueryRequestRow[]>`
    update query_requests set status = ${to}, updated_at = now()
    where id = ${id} and status in ${sql(from)} and revision = ${revision} returning *`;
  return row ?? null;
}

export interface RequestListFilter {
  status?: RequestStatus | undefined;
  databaseId?: string | undefined;
  authorUserId?: string | undefined;
  /** Only requests on databases this user can see (null: no restriction, e.g. a super admin). */
  visibleTo: string | null;
  after?: string | undefined;
  limit: number;
}

/** Newest first, keyset-paginated by id. */
export async function listRequests(sql: Tx, orgId: string, f: RequestListFilter): Promise<QueryRequestRow[]> {
  return sql<QueryRequestRow[]>`
    select r.* from query_requests r join databases d on d.id = r.database_id
    where r.org_id = ${orgId}
      ${f.status ? sql`and r.status = ${f.status}` : sql``}
      ${f.databaseId ? sql`and r.database_id = ${f.databaseId}` : sql``}
      ${f.authorUserId ? sql`and r.author_user_id = ${f.authorUserId}` : sql``}
      ${f.after ? sql`and r.id < ${f.after}` : sql``}
      ${
        f.visibleTo
          ? sql`and (not d.restrict_access or exists (
              select 1 from database_grants g where g.database_id = d.id and g.user_id = ${f.visibleTo}))`
          : sql``
      }
    order by r.id desc
    limit ${f.limit}`;
}

export async function insertReview(sql: Tx, r: Omit<ReviewRow, 'created_at'>): Promise<ReviewRow> {
  const [row] = await sql<ReviewRow[]>`insert into query_request_reviews ${sql(r)} returning *`;
  return row!;
}

export async function listReviews(sql: Tx, requestId: string): Promise<ReviewRow[]> {
  return sql<ReviewRow[]>`select * from query_request_reviews where request_id = ${requestId} order by id`;
}

/**
 * Approvals of the current revision by someone other than the author who is still an active
 * user of the organization, with their current role (access is checked by the caller).
 */
export async function currentApprovers(
  sql: Tx,
  req: Pick<QueryRequestRow, 'id' | 'org_id' | 'revision' | 'author_user_id'>,
): Promise<Array<{ user_id: string; role: 'super_admin' | 'admin' | 'member' }>> {
  return sql<Array<{ user_id: string; role: 'super_admin' | 'admin' | 'member' }>>`
    select distinct r.user_id, u.role from query_request_reviews r join users u on u.id = r.user_id
    where r.request_id = ${req.id} and r.revision = ${req.revision} and r.verdict = 'approve'
      and r.user_id <> ${req.author_user_id} and u.org_id = ${req.org_id} and u.disabled_at is null
    order by r.user_id`;
}

/**
 * Requests left `executing` by a process that stopped (crash, kill) longer than their
 * credential's statement timeout plus `graceSeconds`: marked failed with `error`. A live run
 * always settles within its timeout, so only abandoned ones match.
 */
export async function failAbandonedRequests(
  sql: Tx,
  graceSeconds: number,
  error: string,
): Promise<QueryRequestRow[]> {
  return sql<QueryRequestRow[]>`
    update query_requests r set status = 'failed', error = ${error}, updated_at = now()
    from credentials c
    where c.id = r.credential_id
      and r.status = 'executing'
      and r.updated_at < now() - make_interval(secs => coalesce(c.timeout, 30) + ${graceSeconds})
    returning r.*`;
}

/** One revision of a request's SQL (revision 1 is the submission; each edit adds one). */
export interface RevisionRow {
  request_id: string;
  revision: number;
  statement: string;
  params: unknown;
  created_at: Date;
}

export async function insertRevision(
  sql: Tx,
  r: { requestId: string; revision: number; statement: string; params: unknown },
): Promise<void> {
  await sql`
    insert into query_request_revisions (request_id, revision, statement, params)
    values (${r.requestId}, ${r.revision}, ${r.statement}, ${sql.json(r.params as never)})
    on conflict do nothing`;
}

export async function listRevisions(sql: Tx, requestIds: string[]): Promise<RevisionRow[]> {
  if (requestIds.length === 0) return [];
  return sql<RevisionRow[]>`
    select * from query_request_revisions where request_id in ${sql(requestIds)} order by request_id, revision`;
}

export async function listReviewsOf(sql: Tx, requestIds: string[]): Promise<ReviewRow[]> {
  if (requestIds.length === 0) return [];
  return sql<
    ReviewRow[]
  >`select * from query_request_reviews where request_id in ${sql(requestIds)} order by id`;
}
