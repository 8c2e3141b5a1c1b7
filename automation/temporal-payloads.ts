// What the codec endpoint decodes for a person (docs: "Temporal UI and the codec endpoint"). The
// Temporal UI and CLI send the payloads of a history; each encrypted payload names the organization
// and run it belongs to (bound into its encryption, core/payload-codec.ts). A person gets plaintext
// only of their own organization's runs they may read, redacted by their own data-protection policy
// exactly as the run page redacts (governance/protection/run-output.ts):
//   - a run's state (workflow result, state query) goes through redactRun itself;
//   - a query step's rows are judged by their own protection record;
//   - anything else of a run (inputs, API requests and responses, approvals, failure messages)
//     may carry values copied from rows, so it is hidden whenever the run page would hide any
//     of that run's values from this person.
import type { Payload } from '@temporalio/common';
import { recordEvent } from '../audit/events.ts';
import type { Deps } from '../core/deps.ts';
import { forbidden } from '../core/errors.ts';
import { type EncryptionCodec, isEncrypted, ownerOf, PayloadDecryptError } from '../core/payload-codec.ts';
import {
  hideRows,
  isRows,
  note,
  outputVerdict,
  type RunOrigin,
  redactRun,
  type VerdictMemo,
} from '../governance/protection/run-output.ts';
import { readableWorkflow } from '../governance/workflow-access.ts';
import { principalCaller, type UserPrincipal } from '../identity/principal.ts';
import { findOrgRun } from '../store/temporal-owners.ts';
import { stateQuery } from '../workflows/messages.ts';
import type { RunState } from '../workflows/types.ts';

type CodecDeps = Pick<Deps, 'sql' | 'temporal'>;

const JSON_ENCODING = 'json/plain';
const LIVE_STATE_TIMEOUT_MS = 3000;

/** Decodes `payloads` for `reader`; any payload they may not read refuses the whole request. */
export async function decodeForReader(
  deps: CodecDeps,
  codec: EncryptionCodec,
  reader: UserPrincipal,
  payloads: Payload[],
): Promise<Payload[]> {
  const owners = payloads.filter(isEncrypted).map(ownerOf);
  const runs = [...new Set(owners.map((o) => o.workflowId).filter((id) => id !== ''))];
  const refuse = async (why: string) => {
    await audit(deps, reader, 'denied', { payloads: payloads.length, workflow_ids: runs }, why);
    return forbidden(why);
  };
  // An organization is bound into every payload's encryption: its label cannot be changed.
  if (owners.some((o) => o.orgId !== reader.orgId))
    throw await refuse('a payload belongs to another organization');
  // Every payload of a history is judged for the same reader: each protection record once.
  const memo: VerdictMemo = new Map();
  const taints = new Map<string, string | null>();
  const origins = new Map<string, RunOrigin>();
  for (const id of runs) {
    const taint = await runTaint(deps, reader, id, memo, origins);
    if (taint === undefined) throw await refuse(`run ${id} is not one you may read`);
    taints.set(id, taint);
  }
  let redacted = 0;
  const out: Payload[] = [];
  for (const p of payloads) {
    if (!isEncrypted(p)) {
      // Written before encryption (or never encrypted): the caller already holds these bytes.
      out.push(p);
      continue;
    }
    let plain: Payload;
    try {
      plain = codec.decrypt(p);
    } catch (err) {
      if (err instanceof PayloadDecryptError) throw await refuse('a payload cannot be decoded');
      throw err;
    }
    const run = ownerOf(p).workflowId;
    const seen = await redactPayload(deps, reader, plain, taints.get(run) ?? null, origins.get(run), memo);
    if (seen !== plain) redacted++;
    out.push(seen);
  }
  await audit(
    deps,
    reader,
    'allowed',
    { payloads: payloads.length, encrypted: owners.length, workflow_ids: runs, redacted },
    `decoded ${owners.length} Temporal payload(s)${redacted ? `, ${redacted} redacted` : ''}`,
  );
  return out;
}

/** Encodes for the caller's organization (the Temporal UI's signal and query arguments). */
export function encodeForReader(
  codec: EncryptionCodec,
  reader: UserPrincipal,
  payloads: Payload[],
): Payload[] {
  return payloads.map((p) =>
    isEncrypted(p) ? p : codec.encrypt(p, { keyId: codec.currentKeyId, orgId: reader.orgId, workflowId: '' }),
  );
}

/**
 * undefined: the reader may not read this Temporal workflow. Otherwise why the run page would hide
 * some of its values from them (null: it hides none).
 */
async function runTaint(
  deps: CodecDeps,
  reader: UserPrincipal,
  id: string,
  memo: VerdictMemo,
  origins: Map<string, RunOrigin>,
): Promise<string | null | undefined> {
  const cron = /^cron-(wf_[0-9A-Za-z]+)/.exec(id);
  if (cron) return (await mayReadWorkflow(deps, reader, cron[1]!)) ? null : undefined;
  const row = await findOrgRun(deps.sql, reader.orgId, id);
  if (!row || !(await mayReadWorkflow(deps, reader, row.workflow_id))) return undefined;
  const state = row.state ?? (await liveState(deps, id));
  // Fail closed: without the run's state there is no telling what the run page would hide.
  if (state === null) return 'the run state is not available to check your data-protection policy';
  const origin = { orgId: row.org_id, workflowId: row.workflow_id, initiatorUserId: row.initiator_user_id };
  origins.set(id, origin);
  const seen = await redactRun(deps, reader, state, row.error, origin, memo);
  const hidden = seen.state?.steps.find((s, i) => {
    const before = state.steps[i]?.output;
    return s.output !== before && typeof s.output === 'object' && s.output !== null && 'redacted' in s.output;
  });
  if (hidden) return `step ${hidden.name}: ${String((hidden.output as { redacted: unknown }).redacted)}`;
  // Failure payloads carry the same error text the run page hides from this reader.
  const errorHidden =
    seen.error !== row.error || seen.state?.steps.some((s, i) => s.error !== state.steps[i]?.error);
  return errorHidden ? 'its errors may quote values your data-protection policy hides' : null;
}

async function mayReadWorkflow(deps: CodecDeps, reader: UserPrincipal, workflowId: string): Promise<boolean> {
  return readableWorkflow(deps, principalCaller(reader), workflowId).then(
    () => true,
    () => false,
  );
}

async function redactPayload(
  deps: CodecDeps,
  reader: UserPrincipal,
  p: Payload,
  taint: string | null,
  origin: RunOrigin | undefined,
  memo: VerdictMemo,
): Promise<Payload> {
  const encoding = p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString('utf8') : '';
  if (encoding !== JSON_ENCODING)
    return taint === null ? p : jsonPayload({ redacted: `values hidden: ${taint}` });
  const value: unknown = JSON.parse(Buffer.from(p.data ?? []).toString('utf8'));
  if (isRunState(value)) {
    // With the run's origin, so its errors are hidden exactly as on the run page.
    const seen = (await redactRun(deps, reader, value, null, origin, memo)).state;
    return seen === value ? p : jsonPayload(seen);
  }
  if (isRows(value)) {
    // A query may bind values of an earlier step hidden from this reader: once the run is
    // tainted, every rows payload of it is hidden (as the run page hides later steps).
    const why = taint ?? (await outputVerdict(deps, reader, value, memo));
    return why === null ? p : jsonPayload(hideRows(value, why));
  }
  return taint === null ? p : jsonPayload({ redacted: note(taint) });
}

function isRunState(v: unknown): v is RunState {
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray((v as RunState).steps) &&
    typeof (v as RunState).status === 'string' &&
    Array.isArray((v as RunState).approvals)
  );
}

function jsonPayload(value: unknown): Payload {
  return {
    metadata: { encoding: Buffer.from(JSON_ENCODING) },
    data: Buffer.from(JSON.stringify(value)),
  };
}

async function liveState(deps: CodecDeps, runId: string): Promise<RunState | null> {
  if (!deps.temporal) return null;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), LIVE_STATE_TIMEOUT_MS);
  });
  const query = deps.temporal.client.workflow.getHandle(runId).query(stateQuery);
  query.catch(() => {});
  try {
    return await Promise.race([query, timeout]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function audit(
  deps: CodecDeps,
  reader: UserPrincipal,
  outcome: 'allowed' | 'denied',
  subject: Record<string, unknown>,
  detail: string,
): Promise<void> {
  await recordEvent(deps.sql, {
    orgId: reader.orgId,
    actor: { kind: 'user', userId: reader.userId, role: reader.role },
    origin: 'user',
    event: 'temporal.payloads_decoded',
    subject,
    outcome,
    detail,
  });
}
