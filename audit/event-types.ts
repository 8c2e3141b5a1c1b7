// Every kind of audit event and its fields, in one place. recordEvent (audit/events.ts) accepts
// only the names below with their subject, so an event cannot be recorded with a name or fields
// that this file does not define; the audit page lists the same names in its type filter.

/**
 * A configuration change: the fields that changed with their old and new values (all non-secret
 * fields for a create or a delete). A secret is named in `secrets_changed`, never valued.
 */
export interface Change {
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  secrets_changed?: string[];
}

/** Fields every event of a kind carries; a few older kinds carry more (what ended with a person). */
type Open<T> = T & Record<string, unknown>;

export interface EventSubjects {
  // People and their credentials.
  'user.created': { user_id: string; email: string; role: string };
  'user.role_changed': { user_id: string; from: string; to: string };
  'user.disabled': Open<{ user_id: string }>;
  'user.enabled': { user_id: string };
  'user.deleted': Open<{ user_id: string; email: string }>;
  'user.password_reset': Open<{ user_id: string; email?: string; role: string; expires_at: string }>;
  /** Recorded by no code now (a reset is one event naming the address); kept so chains holding it still read and filter. */
  'user.password_reset_notice': { user_id: string; email: string; channel: string; delivered: boolean };
  'user.password_set': Open<{ user_id: string }>;
  /** A person's own change, proving the old password; every other session of theirs ends. */
  'user.password_changed': { user_id: string; sessions_ended: number };
  'user.password_reset_requested': { user_id: string; expires_at: string; channel: string };
  'user.sso_linked': { user_id: string; issuer: string; sso_subject: string };
  'api_key.create': {
    api_key_id: string;
    owner_user_id: string;
    service_account: boolean;
    act_as_allowed: boolean;
  };
  'api_key.act_as_allowed': { api_key_id: string; act_as_allowed: boolean };
  'api_key.revoked': { api_key_id: string };
  'api_key.act_as': { api_key_id: string; key_owner_id: string; user_id: string };
  'token.created': { token_id: string; user_id: string; name: string; expires_at: string | null };
  'token.revoked': { token_id: string; user_id: string };
  'agent.registered': { agent_id: string; name: string };
  'agent.revoked': { agent_id: string };
  // Organization settings.
  'sso.updated': Open<{ issuer: string }>;
  'sso.deleted': Open<Record<never, never>>;
  'ai_client.limited': { client_id: string; disabled: boolean; database_ids: string[] | null };
  // Databases, credentials and who may use them.
  'database.created': Change & { database_id: string };
  'database.updated': Change & { database_id: string };
  'database.deleted': Change & { database_id: string };
  'database.grant_added': { database_id: string; grant_id: string; user_id: string };
  'database.grant_removed': { database_id: string; grant_id: string; user_id: string };
  'credential.grant_added': {
    database_id: string;
    credential_id: string;
    grant_id: string;
    user_id: string | null;
    role: string | null;
  };
  'credential.grant_removed': {
    database_id: string;
    credential_id: string;
    grant_id: string;
    user_id: string | null;
    role: string | null;
  };
  // Data protection.
  'policy.created': Change & { database_id: string; policy_id: string };
  'policy.updated': Change & { database_id: string; policy_id: string };
  'policy.deleted': Change & { database_id: string; policy_id: string };
  'policy.assigned': Change & { database_id: string; policy_id: string };
  /** An admin looked at a table as another person sees it (workspace/preview-as.ts). */
  'policy.previewed': {
    database_id: string;
    user_id: string;
    table: string;
    /** Rows shown; null when the person's query was refused. */
    rows: number | null;
    /** The pipeline's entry for the query run as the person. */
    query_audit_id: string | null;
  };
  // Reviews of query requests (submitting and running one are query entries with its request_id).
  'review.commented': { request_id: string; review_id: string; revision: number; status: string };
  'review.approved': { request_id: string; review_id: string; revision: number; status: string };
  'review.rejected': { request_id: string; review_id: string; revision: number; status: string };
  'review.edited': Change & { request_id: string; revision: number; approvals_voided: number };
  'review.canceled': { request_id: string; revision: number };
  'query_request.previewed': {
    request_id: string;
    revision: number;
    status: string;
    count: number | null;
    risk: string;
  };
  'query_request.backup_saved': { request_id: string; revision: number; rows: number; expires_at: string };
  'query_request.undo_requested': { request_id: string; undo_of: string; rows: number };
  'query_request.undo_executed': { request_id: string; undo_of: string; rows: number };
  // Automation and dashboards.
  'workflow.created': Change & { workflow_id: string };
  'workflow.updated': Change & { workflow_id: string };
  'workflow.archived': Change & { workflow_id: string };
  /**
   * A run recorded and handed to Temporal: by a person or key (`manual`, `api`; a dashboard
   * action names its dashboard), or by the run itself for `cron` and `tracker` (the webhook
   * delivery named). Input keys only: input values may be protected data.
   */
  'run.started': {
    workflow_id: string;
    run_id: string;
    trigger: string;
    input_keys: string[];
    dashboard_id?: string;
    delivery_id?: string;
  };
  /** A cancel Temporal accepted (the run then records itself canceled), or a run canceled before it started. */
  'run.canceled': { workflow_id: string; run_id: string; status: string; before_start: boolean };
  /**
   * A decision the run accepted on its approval step. Whether a comment was given, never its
   * text: an approver may quote values the run showed them.
   */
  'run.approval_decided': {
    workflow_id: string;
    run_id: string;
    step: string;
    decision: 'approve' | 'reject';
    commented: boolean;
    approvals: number;
    required: number;
  };
  'run.retry': { workflow_id: string; run_id: string; retry_of: string; from_step: string };
  /**
   * A write step's prepared transaction that a dead attempt left on the target, settled by the
   * periodic sweep (automation/prepared-sweep.ts): committed as the ledger recorded, or rolled back
   * because a later attempt claimed the step (`superseded`) or its claim was abandoned.
   */
  'run.write_settled': {
    workflow_id: string;
    run_id: string;
    step_id: string;
    attempt: number;
    settled: 'committed' | 'rolled_back';
    reason: 'recorded_commit' | 'superseded' | 'abandoned';
  };
  'run.rerun': { workflow_id: string; run_id: string; rerun_of: string };
  'dashboard.created': Change & { dashboard_id: string };
  'dashboard.updated': Change & { dashboard_id: string };
  'dashboard.deleted': Change & { dashboard_id: string };
  'dashboard.archived': { dashboard_id: string; archived: boolean };
  /** Shared with one person (`user_id`) or with everyone holding a role (`role`). */
  'dashboard.grant_added': { dashboard_id: string } & ({ user_id: string } | { role: string });
  'dashboard.grant_removed': { dashboard_id: string } & ({ user_id: string } | { role: string });
  // Reading what Temporal holds, and the AI's tools.
  'temporal.payloads_decoded': Open<Record<never, never>>;
  'mcp.tool': { tool: string; arguments: unknown };
}

export type EventType = keyof EventSubjects;

/** What the audit page shows for each kind; `change` kinds carry before/after (Change). */
export interface EventTypeInfo {
  label: string;
  group:
    | 'people'
    | 'access'
    | 'settings'
    | 'databases'
    | 'data protection'
    | 'reviews'
    | 'automation'
    | 'other';
  change: boolean;
}

const info = (label: string, group: EventTypeInfo['group'], change = false): EventTypeInfo => ({
  label,
  group,
  change,
});

export const EVENT_TYPES: { readonly [K in EventType]: EventTypeInfo } = {
  'user.created': info('Person invited', 'people'),
  'user.role_changed': info('Role changed', 'people'),
  'user.disabled': info('Person disabled', 'people'),
  'user.enabled': info('Person enabled', 'people'),
  'user.deleted': info('Person deleted', 'people'),
  'user.password_reset': info('Password reset', 'people'),
  'user.password_reset_notice': info('Password reset notice', 'people'),
  'user.password_set': info('Password set', 'people'),
  'user.password_changed': info('Password changed', 'people'),
  'user.password_reset_requested': info('Password reset requested', 'people'),
  'user.sso_linked': info('Single sign-on linked', 'people'),
  'api_key.create': info('API key created', 'access'),
  'api_key.act_as_allowed': info('API key act-as changed', 'access'),
  'api_key.revoked': info('API key revoked', 'access'),
  'api_key.act_as': info('API key acted for a person', 'access'),
  'token.created': info('Personal token created', 'access'),
  'token.revoked': info('Personal token revoked', 'access'),
  'agent.registered': info('Agent registered', 'access'),
  'agent.revoked': info('Agent revoked', 'access'),
  'sso.updated': info('Single sign-on set', 'settings'),
  'sso.deleted': info('Single sign-on removed', 'settings'),
  'ai_client.limited': info('AI client limits', 'settings'),
  'database.created': info('Database registered', 'databases', true),
  'database.updated': info('Database changed', 'databases', true),
  'database.deleted': info('Database deleted', 'databases', true),
  'database.grant_added': info('Database access granted', 'databases'),
  'database.grant_removed': info('Database access revoked', 'databases'),
  'credential.grant_added': info('Credential access granted', 'databases'),
  'credential.grant_removed': info('Credential access revoked', 'databases'),
  'policy.created': info('Policy created', 'data protection', true),
  'policy.updated': info('Policy or rule changed', 'data protection', true),
  'policy.deleted': info('Policy deleted', 'data protection', true),
  'policy.assigned': info('Policy assignment changed', 'data protection', true),
  'policy.previewed': info('Previewed as a person', 'data protection'),
  'review.commented': info('Review comment', 'reviews'),
  'review.approved': info('Request approved', 'reviews'),
  'review.rejected': info('Request rejected', 'reviews'),
  'review.edited': info('Request edited', 'reviews', true),
  'review.canceled': info('Request canceled', 'reviews'),
  'query_request.previewed': info('Write previewed', 'reviews'),
  'query_request.backup_saved': info('Rows saved for undo', 'reviews'),
  'query_request.undo_requested': info('Undo requested', 'reviews'),
  'query_request.undo_executed': info('Undo executed', 'reviews'),
  'workflow.created': info('Workflow created', 'automation', true),
  'workflow.updated': info('Workflow changed', 'automation', true),
  'workflow.archived': info('Workflow archived', 'automation', true),
  'run.started': info('Run started', 'automation'),
  'run.canceled': info('Run canceled', 'automation'),
  'run.approval_decided': info('Run approval decided', 'automation'),
  'run.retry': info('Run retried', 'automation'),
  'run.write_settled': info('Run write settled', 'automation'),
  'run.rerun': info('Run re-run', 'automation'),
  'dashboard.created': info('Dashboard created', 'automation', true),
  'dashboard.updated': info('Dashboard changed', 'automation', true),
  'dashboard.deleted': info('Dashboard deleted', 'automation', true),
  'dashboard.archived': info('Dashboard archived', 'automation'),
  'dashboard.grant_added': info('Dashboard access granted', 'automation'),
  'dashboard.grant_removed': info('Dashboard access revoked', 'automation'),
  'temporal.payloads_decoded': info('Run data decoded', 'other'),
  'mcp.tool': info('AI tool call', 'other'),
};

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}

/**
 * The fields that differ between two snapshots, as a Change: only changed keys on each side
 * (values compared as JSON, so arrays and objects compare by content).
 */
export function changeOf(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  secretsChanged: string[] = [],
): Change {
  const secrets = secretsChanged.length > 0 ? { secrets_changed: secretsChanged } : {};
  if (before === null || after === null) return { before, after, ...secrets };
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key] ?? null) === JSON.stringify(after[key] ?? null)) continue;
    b[key] = before[key] ?? null;
    a[key] = after[key] ?? null;
  }
  return { before: b, after: a, ...secrets };
}

/** True when a Change changes nothing (an update that set every field to what it was). */
export function isEmptyChange(c: Change): boolean {
  return (
    c.before !== null &&
    c.after !== null &&
    Object.keys(c.after).length === 0 &&
    (c.secrets_changed ?? []).length === 0
  );
}
