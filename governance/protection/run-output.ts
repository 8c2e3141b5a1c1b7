// What a reader sees of a run's outputs (workflows/README.md "Data protection in
// workflows"). A query step's rows were computed under the initiator's data-protection policy;
// a person whose own policy on that database differs, or who cannot see that database, gets
// the values hidden. Templates can copy those values into API calls, so the API steps of such
// a run are hidden too.
import type { Deps } from '../../core/deps.ts';
import type { Principal } from '../../identity/principal.ts';
import { findDatabase } from '../../store/databases.ts';
import { findCredentialTarget, findWorkflow } from '../../store/workflows.ts';
import type { OutputProtection, RunState, StepState } from '../../workflows/types.ts';
import { canSee } from '../access.ts';
import { errorRefusal, hiddenError } from './error-view.ts';
import { currentPolicy } from './index.ts';

type Reader = Pick<Principal, 'kind' | 'orgId' | 'userId' | 'role'>;

/** Why the reader may not see the rows of a step computed under `rec`; null when they may. */
type Verdict = string | null;

/**
 * Verdicts already reached for one reader, by protection record: one request that judges many
 * outputs of the same runs (the codec endpoint decoding a history) reads the store once per record.
 */
export type VerdictMemo = Map<string, Promise<Verdict>>;

/**
 * The run's state as `reader` may see it, and the run's error likewise. Organization keys act
 * for the organization and see everything. Fail closed: a query output without a record of its
 * policy (a run from before the record existed) is hidden from people.
 */
export async function redactRun(
  deps: Pick<Deps, 'sql'>,
  reader: Reader,
  state: RunState | null,
  error: string | null,
  run?: RunOrigin,
  memo: VerdictMemo = new Map(),
): Promise<{ state: RunState | null; error: string | null }> {
  if (reader.kind !== 'user') return { state, error };
  const seen = await redactOutputs(deps, reader, state, error, memo);
  return run ? hideErrors(deps, reader, seen, run) : seen;
}

/** The run whose errors are read: who it ran as and which workflow it is a run of. */
export interface RunOrigin {
  orgId: string;
  workflowId: string;
  initiatorUserId: string | null;
}

/**
 * Errors of a run may quote values its queries read under its initiator's policy: a failed cast
 * (`invalid input syntax for type integer: "…"`), a condition comparing a value, a later step
 * binding one. A reader whose own policy hides values on any database the run read gets every
 * step error but an approval's, and the run's error, replaced by a generic message
 * (error-view.ts decides who may read them).
 */
async function hideErrors(
  deps: Pick<Deps, 'sql'>,
  reader: Reader & { kind: 'user' },
  seen: { state: RunState | null; error: string | null },
  run: RunOrigin,
): Promise<{ state: RunState | null; error: string | null }> {
  const { state, error } = seen;
  const failing = error !== null || (state?.steps.some((s) => s.error !== null) ?? false);
  if (!failing) return seen;
  const why = await valuesRefusal(deps, reader, state, run);
  if (why === null) return seen;
  const hidden = hiddenError(why);
  const hide = (e: string | null) => (e === null || e.startsWith('the error is hidden') ? e : hidden);
  return {
    state: state && {
      ...state,
      error: hide(state.error),
      steps: state.steps.map((s) => (s.type === 'approval' ? s : { ...s, error: hide(s.error) })),
    },
    error: hide(error),
  };
}

/**
 * Why `reader` may not read values the run carries from its initiator — its errors, and its
 * inputs, which a dashboard row action or the initiator may have copied from rows their own policy
 * let them see — or null when they may. The rule of errors (error-view.ts), on every database
 * the run reads: a reader under a policy there that is not the initiator's does not get them.
 */
export async function valuesRefusal(
  deps: Pick<Deps, 'sql'>,
  reader: Reader,
  state: RunState | null,
  run: RunOrigin,
  memo?: Map<string, Promise<string | null>>,
): Promise<string | null> {
  if (reader.kind !== 'user') return null;
  const actor = { kind: 'user' as const, userId: reader.userId, role: reader.role };
  const ranAs = run.initiatorUserId ? { userId: run.initiatorUserId } : null;
  for (const databaseId of await databasesRead(deps, state, run)) {
    const key = `${databaseId}|${run.initiatorUserId}`;
    let verdict = memo?.get(key);
    if (!verdict) {
      verdict = errorRefusal(deps.sql, databaseId, actor, ranAs);
      memo?.set(key, verdict);
    }
    const why = await verdict;
    if (why !== null) return why;
  }
  return null;
}

/** Databases the run's queries read: the ones their outputs record, and the definition's query steps. */
async function databasesRead(
  deps: Pick<Deps, 'sql'>,
  state: RunState | null,
  run: RunOrigin,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const step of state?.steps ?? []) {
    const rec = isRows(step.output) ? protectionOf(step.output) : null;
    if (rec) ids.add(rec.database_id);
  }
  const wf = await findWorkflow(deps.sql, run.orgId, run.workflowId);
  for (const step of wf?.steps ?? []) {
    if (step.action.__type__ !== 'query') continue;
    const target = await findCredentialTarget(deps.sql, run.orgId, step.action.credential_id);
    if (target) ids.add(target.database_id);
  }
  return [...ids];
}

/** Query outputs hidden from a reader whose policy differs from the one they were computed under. */
async function redactOutputs(
  deps: Pick<Deps, 'sql'>,
  reader: Reader & { kind: 'user' },
  state: RunState | null,
  error: string | null,
  memo: VerdictMemo,
): Promise<{ state: RunState | null; error: string | null }> {
  if (state === null) return { state, error };
  const verdictOn = (rec: OutputProtection) => remembered(deps, reader, rec, memo);
  let taint: string | null = null;
  const steps: StepState[] = [];
  for (const step of state.steps) {
    if (step.type !== 'query' || !isRows(step.output)) {
      steps.push(step);
      continue;
    }
    const rec = protectionOf(step.output);
    const own = rec ? await verdictOn(rec) : 'it was computed before outputs recorded their policy';
    // A later query may bind values of an earlier step hidden from this reader
    // (`${step.a.output.rows[0][0]}`) and return them from a database it may read: hide it too.
    const why: Verdict = own ?? (taint === null ? null : `it may bind values of ${taint}`);
    if (why === null) {
      steps.push(step);
      continue;
    }
    taint ??= `step ${step.name}: ${why}`;
    steps.push({ ...step, output: hideRows(step.output, why) });
  }
  if (taint === null) return { state, error };
  const hidden = new Set<string>();
  const out = steps.map((s) => {
    if (s.type !== 'api') return s;
    hidden.add(s.name);
    // The request body and the response (echoed into the error too) may carry copied values.
    return {
      ...s,
      output: s.output === null ? null : { status_code: null, body: null, redacted: note(taint) },
      error: s.error === null ? null : `the error is hidden: ${note(taint)}`,
    };
  });
  const hideError = (e: string | null) =>
    e !== null && [...hidden].some((n) => e.startsWith(`step ${n}:`))
      ? `the error is hidden: ${note(taint)}`
      : e;
  return { state: { ...state, steps: out, error: hideError(state.error) }, error: hideError(error) };
}

/**
 * The verdict on one query output (rows and their protection record) for `reader`, as redactRun
 * judges each step: null when they may see its values, else why not. For outputs seen outside
 * a run view (Temporal payloads decoded by the codec endpoint).
 */
export async function outputVerdict(
  deps: Pick<Deps, 'sql'>,
  reader: Reader,
  output: object,
  memo: VerdictMemo = new Map(),
): Promise<Verdict> {
  if (reader.kind !== 'user') return null;
  const rec = protectionOf(output);
  return rec ? remembered(deps, reader, rec, memo) : 'it was computed before outputs recorded their policy';
}

function remembered(
  deps: Pick<Deps, 'sql'>,
  reader: Reader & { kind: 'user' },
  rec: OutputProtection,
  memo: VerdictMemo,
): Promise<Verdict> {
  const key = `${rec.database_id}|${rec.policy_id}|${rec.policy_version}`;
  let verdict = memo.get(key);
  if (!verdict) {
    verdict = judge(deps, reader, rec);
    memo.set(key, verdict);
  }
  return verdict;
}

async function judge(deps: Pick<Deps, 'sql'>, reader: Reader & { kind: 'user' }, rec: OutputProtection) {
  const actor = { kind: 'user' as const, userId: reader.userId, role: reader.role };
  const db = await findDatabase(deps.sql, reader.orgId, rec.database_id);
  if (!db || !(await canSee(deps.sql, db, actor))) return 'its database is not visible to you';
  const mine = await currentPolicy(deps.sql, rec.database_id, actor);
  // Without a policy of their own the reader could read every value of that database anyway.
  if (mine === null) return null;
  if (mine.policyId === rec.policy_id && mine.version === rec.policy_version) return null;
  if (mine.policyId === rec.policy_id)
    return `policy ${mine.policyId}, which applies to you on ${db.name}, has changed since the step ran`;
  return rec.policy_id === null
    ? `it ran without a data-protection policy and policy ${mine.policyId} applies to you on ${db.name}`
    : `it ran under data-protection policy ${rec.policy_id} and policy ${mine.policyId} applies to you on ${db.name}`;
}

export function note(why: string): string {
  return `values hidden because ${why}`;
}

export function isRows(o: unknown): o is { rows: unknown[][]; messages?: unknown } {
  return typeof o === 'object' && o !== null && Array.isArray((o as { rows?: unknown }).rows);
}

function protectionOf(o: object): OutputProtection | null {
  const p = (o as { protection?: unknown }).protection;
  if (typeof p !== 'object' || p === null) return null;
  const { database_id, policy_id, policy_version } = p as Record<string, unknown>;
  const idOrNull = (x: unknown): x is string | null => x === null || typeof x === 'string';
  if (typeof database_id !== 'string' || !idOrNull(policy_id) || !idOrNull(policy_version)) return null;
  return { database_id, policy_id, policy_version };
}

/** The same shape (columns, row count) with every value null; server messages may quote values. */
export function hideRows(o: { rows: unknown[][] }, why: string) {
  return {
    ...o,
    rows: o.rows.map((r) => (Array.isArray(r) ? r.map(() => null) : [])),
    messages: [],
    redacted: note(why),
  };
}
