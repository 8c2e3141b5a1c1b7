// Write preview for reviewers: what a pending write would touch, computed without executing it.
// The SELECTs (statements.ts) run as the READER — their own access to the request's credential,
// their own data-protection policy masking what they may not see — in a read-only transaction
// under the credential's statement timeout. Computed each time the request is read, so an edit
// shows a fresh preview, stamped with the time it was made.
import type { QueryResult } from '../../adapters/types.ts';
import { recordEvent } from '../../audit/events.ts';
import { readDbSchema } from '../../sql/catalog.ts';
import { findDatabase, listCredentials } from '../../store/databases.ts';
import type { QueryRequestRow } from '../../store/query-requests.ts';
import { resolveTarget } from '../access.ts';
import { poolFor } from '../connections.ts';
import { DEFAULT_TIMEOUT_SECONDS } from '../execute.ts';
import { decodeParams } from '../params.ts';
import { planProtection } from '../protection/index.ts';
import type { GovernanceDeps, QueryActor } from '../types.ts';
import { type UndoState, undoPreviewNote, undoState } from '../undo/index.ts';
import { type Risk, riskOf } from './risk.ts';
import { PREVIEW_ROWS, type PreviewPlan, previewPlan } from './statements.ts';

export interface WritePreview {
  /**
   * rows: count and rows; count: the count only (say why in `note`); definition: DDL, the
   * current definition of what it touches; timeout and unavailable: no preview, `note` says why.
   */
  status: 'rows' | 'count' | 'definition' | 'timeout' | 'unavailable';
  computed_at: string;
  verb: string | null;
  /** Rows the write would touch, exactly (as the reader's policy lets them count). */
  count: number | null;
  columns: string[];
  before: unknown[][];
  after: unknown[][];
  /** Columns the write assigns (UPDATE), shown changed in `after`. */
  assigned: string[];
  definition: Array<{ relation: string; columns: Array<{ name: string; type: string }> }>;
  note: string | null;
  /** How risky the write is (risk.ts), and why. */
  risk: Risk;
  /** Whether the write can be undone once it ran (governance/undo/), said before it is approved. */
  undo?: UndoState;
}

/** The preview of a pending write as `reader` may see it; null for a read. */
export async function previewRequest(
  deps: GovernanceDeps,
  request: QueryRequestRow,
  reader: QueryActor,
): Promise<WritePreview | null> {
  if (request.classification !== 'write') return null;
  const preview = request.undo_of
    ? await undoPreview(deps, request)
    : await computePreview(deps, request, reader);
  if (!request.undo_of) preview.undo = await undoFor(deps, request, preview.count);
  // Who read which rows of a pending write, and what risk it showed, is part of the request's record.
  await recordEvent(deps.sql, {
    orgId: request.org_id,
    actor: reader,
    origin: 'user',
    event: 'query_request.previewed',
    subject: {
      request_id: request.id,
      revision: request.revision,
      status: preview.status,
      count: preview.count,
      risk: preview.risk.level,
    },
    databaseId: request.database_id,
    outcome: 'allowed',
    detail: `preview of ${request.id} revision ${request.revision}: ${preview.status}${preview.count === null ? '' : `, ${preview.count} row(s)`}; risk ${preview.risk.level} (${preview.risk.why})`,
  });
  return preview;
}

/** The fields of a request a preview reads. */
export type PreviewSubject = Pick<
  QueryRequestRow,
  'org_id' | 'database_id' | 'credential_id' | 'statement' | 'params'
>;

/** The preview itself, unaudited: previewRequest records it; a risk assessment only counts. */
export async function computePreview(
  deps: GovernanceDeps,
  request: PreviewSubject,
  reader: QueryActor,
): Promise<WritePreview> {
  const out: WritePreview = {
    status: 'unavailable',
    computed_at: new Date().toISOString(),
    verb: null,
    count: null,
    columns: [],
    before: [],
    after: [],
    assigned: [],
    definition: [],
    note: null,
    risk: { level: 'ordinary', why: 'an ordinary write' },
  };
  let target: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    target = await resolveTarget(deps.sql, {
      orgId: request.org_id,
      actor: reader,
      databaseId: request.database_id,
      credentialId: request.credential_id,
    });
  } catch {
    // The preview reads with the reader's own rights: without the credential there is none.
    return { ...out, note: 'you cannot use this credential, so no preview is read for you' };
  }
  const plan = await previewPlan(target.db.adapter, request.statement);
  if (plan.kind === 'none') return { ...out, note: plan.reason };
  // The credential says how many rows make a write large.
  const large = target.cred.large_write_rows;
  out.risk = riskOf(plan, null, large);
  out.verb = plan.verb;
  if (plan.kind === 'ddl') return definition(deps, target, plan, out);
  const run = async (sql: string, maxRows: number): Promise<QueryResult> => {
    const p = await planProtection(deps, {
      orgId: request.org_id,
      db: target.db,
      cred: target.cred,
      actor: reader,
      policyId: target.policyId,
      statement: sql,
      params: decodeParams(request.params),
    });
    try {
      const raw = await poolFor(deps, target.db, target.cred).execute(p.statement, p.params, {
        maxRows,
        timeoutSeconds: target.cred.timeout ?? DEFAULT_TIMEOUT_SECONDS,
        readOnly: true,
      });
      return p.redact(raw);
    } catch (err) {
      throw p.failure(err);
    }
  };
  try {
    if (plan.volatile) {
      const counted = await run(`SELECT count(*) AS count FROM (${plan.select}) AS touched`, 1);
      out.count = Number(counted.rows[0]?.[0] ?? 0);
      return {
        ...out,
        status: 'count',
        risk: riskOf(plan, out.count, large),
        note: 'the statement calls a volatile function (random, a sequence, the clock): its new values cannot be shown before it runs',
      };
    }
    // One round trip: the first rows, each carrying the count of all of them (a window count).
    const r = await run(
      `SELECT *, count(*) OVER () AS preview_count FROM (${plan.select}) AS touched LIMIT ${PREVIEW_ROWS}`,
      PREVIEW_ROWS,
    );
    out.count = r.rows.length ? Number(r.rows[0]!.at(-1)) : 0;
    out.risk = riskOf(plan, out.count, large);
    const rows = { ...r, columns: r.columns.slice(0, -1), rows: r.rows.map((row) => row.slice(0, -1)) };
    return { ...out, ...beforeAfter(rows, plan.assigned, plan.verb), status: 'rows' };
  } catch (err) {
    const e = err as { kind?: string; detail?: string; message?: string };
    if (e.kind === 'timeout')
      return {
        ...out,
        status: 'timeout',
        note: "the preview did not finish within the credential's statement timeout",
      };
    return { ...out, note: `the preview could not be read: ${e.detail ?? e.message ?? 'error'}` };
  }
}

/** An undo request shows how many kept rows it puts back, never their values. */
async function undoPreview(deps: GovernanceDeps, request: QueryRequestRow): Promise<WritePreview> {
  const { count, note } = await undoPreviewNote(deps, request);
  return {
    status: 'count',
    computed_at: new Date().toISOString(),
    verb: /^\s*insert/i.test(request.statement) ? 'INSERT' : 'UPDATE',
    count,
    columns: [],
    before: [],
    after: [],
    assigned: [],
    definition: [],
    note,
    risk: { level: 'ordinary', why: 'puts back rows an approved write changed' },
  };
}

/** Undo as reviewers see it, judged with the request's own credential (the catalog only). */
async function undoFor(deps: GovernanceDeps, request: QueryRequestRow, count: number | null) {
  const db = await findDatabase(deps.sql, request.org_id, request.database_id);
  const cred = db && (await listCredentials(deps.sql, [db.id])).find((c) => c.id === request.credential_id);
  if (!db || !cred) return undefined;
  return undoState(deps, request, db, cred, count);
}

/** Splits the preview rows into the target's columns before and after the SET expressions. */
function beforeAfter(
  r: QueryResult,
  assigned: string[],
  verb: string,
): Pick<WritePreview, 'columns' | 'before' | 'after' | 'assigned'> {
  if (verb === 'INSERT') return { columns: r.columns, before: [], after: r.rows, assigned: [] };
  const width = r.columns.length - assigned.length;
  const columns = r.columns.slice(0, width);
  const before = r.rows.map((row) => row.slice(0, width));
  if (verb === 'DELETE') return { columns, before, after: [], assigned: [] };
  const at = assigned.map((a) => columns.findIndex((c) => c.toLowerCase() === a.toLowerCase()));
  const after = r.rows.map((row) => {
    const next = row.slice(0, width);
    at.forEach((i, k) => {
      if (i >= 0) next[i] = row[width + k];
    });
    return next;
  });
  return { columns, before, after, assigned };
}

/** DDL: the current columns of each relation the statement touches. */
async function definition(
  deps: GovernanceDeps,
  target: Awaited<ReturnType<typeof resolveTarget>>,
  plan: Extract<PreviewPlan, { kind: 'ddl' }>,
  out: WritePreview,
): Promise<WritePreview> {
  try {
    const schema = await readDbSchema(
      poolFor(deps, target.db, target.cred),
      target.db.adapter === 'postgres' ? 'postgres' : 'mysql',
    );
    const definition = plan.relations.flatMap((r) => {
      const rel = schema.find(r.schema, r.name);
      return rel
        ? [
            {
              relation: `${rel.schema}.${rel.name}`,
              columns: rel.columns.map((c) => ({ name: c.name, type: c.type })),
            },
          ]
        : [];
    });
    return {
      ...out,
      status: 'definition',
      definition,
      note: definition.length ? null : 'the relations it names do not exist yet',
    };
  } catch {
    return { ...out, note: 'the current definition could not be read' };
  }
}
