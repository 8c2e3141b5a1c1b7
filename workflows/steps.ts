// One function per step kind. Conditions and approvals run in the workflow; query, api, chat and
// chat_reply are activities with their own timeouts and retry policies, local ones where the step
// is short (activity-options.ts).
import {
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { evaluateCondition, renderJson, renderText } from '../expr/index.ts';
import {
  apiOptions,
  BOOKKEEPING_OPTIONS,
  chatOptions,
  DEFAULT_STEP_TIMEOUT_SECONDS,
  PLAN_OPTIONS,
  queryOptions,
  queryPlacement,
  type StepPlacement,
} from './activity-options.ts';
import { contextFor, fullContext, renderUrl } from './context.ts';
import type {
  ApiAction,
  ApprovalAction,
  ChatAction,
  ChatReplyAction,
  QueryAction,
  RunSnapshot,
  RunState,
  StepDefinition,
} from './types.ts';

const remote = proxyActivities<Activities>(BOOKKEEPING_OPTIONS);
const local = proxyLocalActivities<Activities>(BOOKKEEPING_OPTIONS);

/** The activities a step or the bookkeeping runs on: local ones only in runs that began with them. */
export function activitiesFor(rt: Pick<StepRuntime, 'localSteps'>, placement?: StepPlacement) {
  return rt.localSteps && (placement?.local ?? true) ? local : remote;
}

/** Ends the run early with this status (a false condition action). */
export class StopRun {
  constructor(
    readonly status: 'succeeded' | 'failed',
    readonly error: string | null,
  ) {}
}

/** Ends the run as rejected or expired at an approval step (the step itself fails). */
export class ApprovalEnded {
  constructor(
    readonly status: 'rejected' | 'expired',
    readonly error: string,
  ) {}
}

/** What a step runner sees: the snapshot, the live state, and the approval step being waited on. */
export interface StepRuntime {
  snapshot: RunSnapshot;
  state: RunState;
  waitingFor: StepDefinition | null;
  /** patched(LOCAL_STEPS_PATCH): false only when replaying a run begun before local activities. */
  localSteps: boolean;
  /** patched(EXACTLY_ONCE_PATCH): false only when replaying a run begun before exactly-once steps. */
  onceSteps: boolean;
}

/** Runs one step and returns its output (SPEC.md 2.1 "Step output shapes"). */
export async function runStep(rt: StepRuntime, step: StepDefinition): Promise<unknown> {
  const a = step.action;
  switch (a.__type__) {
    case 'query':
      return query(rt, step, a);
    case 'api':
      return api(rt, step, a);
    case 'chat':
      return chat(rt, step, a);
    case 'chat_reply':
      return chatReply(rt, step, a);
    case 'approval':
      return approval(rt, step, a);
    case 'condition': {
      const result = evaluateCondition(a.expression, fullContext(rt.snapshot, rt.state));
      if (!result) {
        throw new StopRun(
          a.on_false === 'succeed' ? 'succeeded' : 'failed',
          a.on_false === 'succeed' ? null : `condition step ${step.name} was false`,
        );
      }
      return { result };
    }
  }
}

async function query(rt: StepRuntime, step: StepDefinition, a: QueryAction) {
  const { snapshot } = rt;
  // Rendered in the activity: the placeholder style depends on the credential's database.
  const ctx = contextFor(a.query, fullContext(snapshot, rt.state));
  const summary = `query: ${step.name}`;
  let placement: StepPlacement;
  if (rt.onceSteps) {
    // The timeout it runs under and whether it writes are known only to the store and the parser.
    const plan = await activitiesFor(rt).planQueryStep.executeWithOptions(PLAN_OPTIONS, [
      {
        orgId: snapshot.orgId,
        credentialId: a.credential_id,
        query: a.query,
        timeoutSeconds: a.timeout_seconds,
        ctx,
      },
    ]);
    placement = queryPlacement(plan, summary);
  } else placement = queryOptions(a.timeout_seconds, summary);
  return activitiesFor(rt, placement).runQueryStep.executeWithOptions(placement.options, [
    {
      orgId: snapshot.orgId,
      runId: snapshot.runId,
      workflowId: snapshot.workflowId,
      ...(rt.onceSteps ? { stepId: step.id } : {}),
      credentialId: a.credential_id,
      query: a.query,
      timeoutSeconds: a.timeout_seconds,
      // The step runs as this person (read again in the activity): their access and policy apply.
      initiatorUserId: snapshot.initiatorUserId,
      ctx,
    },
  ]);
}

function api(rt: StepRuntime, step: StepDefinition, a: ApiAction) {
  const ctx = fullContext(rt.snapshot, rt.state);
  const endpoint = renderUrl(a.endpoint, ctx);
  const body = a.body === null ? null : { json: renderJson(a.body, ctx) };
  const placement = apiOptions(a.timeout_seconds, `api: ${step.name} ${a.method} ${safeUrl(endpoint)}`);
  const call = activitiesFor(rt, placement).callApiStep.executeWithOptions(placement.options, [
    {
      runId: rt.snapshot.runId,
      workflowId: rt.snapshot.workflowId,
      stepId: step.id,
      method: a.method,
      endpoint,
      headers: a.headers,
      body,
      expectedStatus: a.expected_status,
      includeServiceJwt: a.include_service_jwt,
      timeoutSeconds: a.timeout_seconds,
    },
  ]);
  return call.catch((err: unknown) => {
    throw timedOut(err) ? new Error(timeoutMessage(a, endpoint)) : err;
  });
}

/** Whether an api step failed by running out of time (Temporal's limit, or the request's own). */
function timedOut(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e instanceof TimeoutFailure) return true;
    if (e instanceof ApplicationFailure && /^no complete response within /.test(e.message)) return true;
  }
  return false;
}

/** "Activity timed out" says nothing: name the request, its host and the time it had. */
function timeoutMessage(a: ApiAction, endpoint: string): string {
  const host = /^https?:\/\/(?:[^@/]*@)?([^/?#]*)/i.exec(endpoint)?.[1] ?? 'the endpoint';
  const seconds = a.timeout_seconds ?? DEFAULT_STEP_TIMEOUT_SECONDS;
  return `${a.method} to ${host} timed out: no complete response within ${seconds} s (timeout_seconds ${a.timeout_seconds ?? `unset, default ${seconds}`})`;
}

function chat(rt: StepRuntime, step: StepDefinition, a: ChatAction) {
  let text = renderText(a.message, fullContext(rt.snapshot, rt.state));
  // SPEC.md 2.1: link_text is the text of the link to the run (Slack mrkdwn link syntax).
  if (a.link_text) text += `\n<${rt.snapshot.runUrl}|${a.link_text.replace(/[<>|]/g, '')}>`;
  const placement = chatOptions(`chat: ${step.name} to ${a.chat_channel}`);
  return activitiesFor(rt, placement).postChatMessage.executeWithOptions(placement.options, [
    { channel: a.chat_channel, text, threadTs: null },
  ]);
}

function chatReply(rt: StepRuntime, step: StepDefinition, a: ChatReplyAction) {
  const parent = rt.state.steps.find((s) => s.name === a.step_name);
  const out = parent?.output as { channel?: string; timestamp?: string } | null | undefined;
  if (parent?.status !== 'succeeded' || !out?.channel || !out.timestamp) {
    throw new Error(`chat step ${a.step_name} did not send a message to reply to`);
  }
  const text = renderText(a.message, fullContext(rt.snapshot, rt.state));
  const placement = chatOptions(`chat_reply: ${step.name} in thread of ${a.step_name}`);
  return activitiesFor(rt, placement).postChatMessage.executeWithOptions(placement.options, [
    { channel: out.channel, text, threadTs: out.timestamp },
  ]);
}

async function approval(rt: StepRuntime, step: StepDefinition, a: ApprovalAction) {
  const { state, snapshot } = rt;
  const decisions = () => state.approvals.filter((x) => x.step === step.name);
  const st = state.steps.find((s) => s.id === step.id)!;
  st.status = 'waiting';
  rt.waitingFor = step;
  await activitiesFor(rt).setRunStatus(snapshot.runId, 'waiting_for_approval');
  const done = () =>
    decisions().some((d) => d.decision === 'reject') ||
    decisions().filter((d) => d.decision === 'approve').length >= a.reviews_required;
  // condition(fn, undefined) would be a zero timeout: without a timeout, wait indefinitely.
  let decided = true;
  if (a.timeout_seconds === null) await condition(done);
  else decided = await condition(done, a.timeout_seconds * 1000);
  rt.waitingFor = null;
  if (!decided) {
    if (a.on_timeout !== 'reject')
      throw new ApprovalEnded('expired', `no decision within ${a.timeout_seconds} s`);
    // Expiry as a rejection: recorded with the approvals, so the run page says who decided — nobody.
    state.approvals.push({
      step: step.name,
      user_id: '',
      email: 'expiry',
      decision: 'reject',
      comment: `no decision within ${a.timeout_seconds} s`,
      at: new Date().toISOString(),
    });
    throw new ApprovalEnded('rejected', `rejected on expiry: no decision within ${a.timeout_seconds} s`);
  }
  const rejection = decisions().find((d) => d.decision === 'reject');
  if (rejection)
    throw new ApprovalEnded(
      'rejected',
      `rejected by ${rejection.email}${rejection.comment ? `: ${rejection.comment}` : ''}`,
    );
  await activitiesFor(rt).setRunStatus(snapshot.runId, 'running');
  return { approved_by: decisions().map((d) => ({ user_id: d.user_id, email: d.email })) };
}

/** The URL without its query string or user info, for the Temporal UI summary (they may carry tokens). */
function safeUrl(endpoint: string): string {
  const m = /^(https?:\/\/)(?:[^@/]*@)?([^?#]*)/i.exec(endpoint);
  return m ? `${m[1]}${m[2]}` : 'endpoint';
}
