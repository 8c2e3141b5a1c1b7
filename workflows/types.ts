// Types shared by the API side, the interpreter (bundled by the Temporal worker) and the activities.
// Types only: nothing here may pull a Node module into the workflow bundle.
import type { InputType } from '../expr/index.ts';

/** SPEC.md 2.1 input definition. */
export interface InputDefinition {
  key: string;
  description: string;
  type: InputType;
  /** Used when a run gives no value; a cron run has none for an input without a default. */
  default?: string | number | boolean | null;
}

/** Who may approve an approval step: one user, or everyone with a role (workflows/README.md). */
export type Permission = { user_id: string } | { role: 'super_admin' | 'admin' | 'member' };

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Runs a SQL template through the governed query pipeline as the chosen credential. */
export interface QueryAction {
  __type__: 'query';
  credential_id: string;
  query: string;
  timeout_seconds: number | null;
}

/** An HTTP request. `headers` values are sealed envelopes at rest and in run snapshots. */
export interface ApiAction {
  __type__: 'api';
  endpoint: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body: string | null;
  expected_status: number;
  include_service_jwt: boolean;
  timeout_seconds: number | null;
}

export interface ChatAction {
  __type__: 'chat';
  chat_channel: string;
  message: string;
  link_text: string | null;
}

export interface ChatReplyAction {
  __type__: 'chat_reply';
  step_name: string;
  message: string;
}

export interface ApprovalAction {
  __type__: 'approval';
  reviews_required: number;
  timeout_seconds: number | null;
  /** On expiry: fail the run, or record a rejection by expiry (then it ends as rejected). */
  on_timeout?: 'fail' | 'reject';
}

export interface ConditionAction {
  __type__: 'condition';
  expression: string;
  /** What the run becomes when the expression is false (SPEC.md 2.1 condition action). */
  on_false: 'succeed' | 'fail';
}

export type Action =
  | QueryAction
  | ApiAction
  | ChatAction
  | ChatReplyAction
  | ApprovalAction
  | ConditionAction;
export type ActionType = Action['__type__'];

export interface StepDefinition {
  id: string;
  name: string;
  condition: string | null;
  action: Action;
  permissions: Permission[];
}

export type RunTrigger = 'manual' | 'api' | 'cron' | 'tracker';

/** Everything a run needs, frozen when it starts: editing the definition never changes a running run. */
export interface RunSnapshot {
  runId: string;
  orgId: string;
  workflowId: string;
  workflowName: string;
  trigger: RunTrigger;
  /** The person who started the run; they may not approve it. Null for keys, cron and tracker. */
  initiatorUserId: string | null;
  inputs: Record<string, string | number | boolean>;
  /**
   * Inputs this run has no value for: a cron run gets none for an input without a default. A
   * step that refers to one fails, naming it; the others run.
   */
  unsetInputs?: string[];
  steps: StepDefinition[];
  /** Where people can look at the run (chat messages link here). */
  runUrl: string;
  /**
   * A retry of a failed run: the steps before `fromIndex` completed in run `retryOf`
   * and are not run again — their states (outputs included) and the approvals given are reused.
   */
  resume?: { retryOf: string; fromIndex: number; steps: StepState[]; approvals: ApprovalRecord[] };
}

/**
 * Under which data-protection policy a query step's rows were computed: the initiator's policy
 * on that database, null when none applied (the organization, or a person without a policy).
 * `'unknown'` when the policy changed while the query ran: it matches no reader's policy.
 */
export interface OutputProtection {
  database_id: string;
  policy_id: string | null;
  /** When that policy last changed (its rules included); null without a policy. */
  policy_version: string | null;
}

/**
 * `rejected`: an approver rejected (or an expiry with `on_timeout: "reject"` did), final;
 * `expired`: an approval got no decision in time (`on_timeout: "fail"`), retryable like `failed`.
 */
export type RunStatus =
  | 'running'
  | 'waiting_for_approval'
  | 'succeeded'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'expired';

/** Every run status, in the order lists and filters show them. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'running',
  'waiting_for_approval',
  'succeeded',
  'failed',
  'rejected',
  'expired',
  'canceled',
];
export type StepStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'skipped' | 'failed' | 'canceled';

export interface StepState {
  id: string;
  name: string;
  type: ActionType;
  status: StepStatus;
  output: unknown;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface ApprovalRecord {
  step: string;
  user_id: string;
  email: string;
  decision: 'approve' | 'reject';
  comment: string | null;
  at: string;
}

/** What the `state` query returns and what is stored when the run ends. */
export interface RunState {
  status: RunStatus;
  error: string | null;
  steps: StepState[];
  approvals: ApprovalRecord[];
}

/** The `approve` update's argument: the API fills the approver from the authenticated principal. */
export interface ApprovalInput {
  user_id: string;
  email: string;
  role: 'super_admin' | 'admin' | 'member';
  decision: 'approve' | 'reject';
  comment: string | null;
}

/** Search attribute names registered on the Temporal namespace (list runs from visibility). */
export const SEARCH_ATTRIBUTE_WORKFLOW_ID = 'CountersignWorkflowId';
export const SEARCH_ATTRIBUTE_ORG_ID = 'CountersignOrgId';
