// Risk levels that drive reviews. Each write is assessed when it is submitted and again when it is
// edited (preview/risk.ts names the levels); the credential says what each level requires: a number
// of approvals, never fewer than its reviews_required, and optionally the role its approvers must
// hold. A write whose level cannot be told (an unreadable statement, rows that could not be
// counted) is held to the strictest level the credential configures: failing closed, a
// multi-statement batch cannot hide a DDL from the DDL rule.
import type { CredentialRow, RiskLevelName } from '../store/databases.ts';
import type { QueryRequestRow } from '../store/query-requests.ts';
import type { Role } from '../store/users.ts';
import type { Risk } from './preview/risk.ts';

export type ApproverRole = 'admin' | 'super_admin';

/** What a request needs before it runs: its level, why, and the approvals that level requires. */
export interface Requirement {
  /** Null for a read: levels classify writes only. */
  level: RiskLevelName | null;
  why: string | null;
  reviews_required: number;
  /** Only approvals of people with this role or a higher one count; null: any eligible reviewer. */
  approver_role: ApproverRole | null;
}

const RANK: Record<Role, number> = { member: 0, admin: 1, super_admin: 2 };
const LEVELS: RiskLevelName[] = ['ordinary', 'no_where', 'large', 'ddl'];

/** Whether a person of `role` may give an approval that counts under `required`. */
export function roleMayApprove(role: Role, required: ApproverRole | null): boolean {
  return required === null || RANK[role] >= RANK[required];
}

/** The stricter of two approver roles. */
function stricterRole(a: ApproverRole | null, b: ApproverRole | null): ApproverRole | null {
  if (a === null) return b;
  if (b === null) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

export type RiskSettings = Pick<CredentialRow, 'reviews_required' | 'risk_reviews'>;

/** What the credential requires for a write at `level` (a read: its reviews_required alone). */
export function requirementFor(cred: RiskSettings, risk: Risk | null): Requirement {
  if (!risk) return { level: null, why: null, reviews_required: cred.reviews_required, approver_role: null };
  const rule = cred.risk_reviews[risk.level];
  return {
    level: risk.level,
    why: risk.why,
    // A level asks for more reviews, never fewer than the credential's own number.
    reviews_required: Math.max(cred.reviews_required, rule?.reviews_required ?? 0),
    approver_role: rule?.approver_role ?? null,
  };
}

/**
 * What a stored request needs now: what it was assessed at, made stricter by the credential's
 * current rule for its level (a rule that grew since submission holds the request to it).
 */
export function currentRequirement(
  cred: RiskSettings,
  r: Pick<QueryRequestRow, 'risk_level' | 'risk_why' | 'reviews_required' | 'approver_role'>,
): Requirement {
  const now = requirementFor(cred, r.risk_level ? { level: r.risk_level, why: r.risk_why ?? '' } : null);
  return {
    level: r.risk_level,
    why: r.risk_why,
    reviews_required: Math.max(r.reviews_required, now.reviews_required),
    approver_role: stricterRole(r.approver_role, now.approver_role),
  };
}

/** Whether `a` asks more than `b`: more approvals, or as many from a higher role. */
export function stricter(a: Requirement, b: Requirement): boolean {
  return (
    a.reviews_required > b.reviews_required ||
    (a.reviews_required === b.reviews_required &&
      RANK[a.approver_role ?? 'member'] > RANK[b.approver_role ?? 'member'])
  );
}

/** The level whose requirement is strictest (more approvals, then a higher role); ordinary on a tie. */
export function strictest(cred: RiskSettings, why: string): Risk {
  let best: Risk = { level: 'ordinary', why };
  let need = requirementFor(cred, best);
  for (const level of LEVELS) {
    const r = requirementFor(cred, { level, why });
    if (stricter(r, need)) {
      best = { level, why };
      need = r;
    }
  }
  return best;
}

/** Whether any query on the credential can need a review: else nothing needs assessing. */
export function reviewsConfigured(cred: RiskSettings): boolean {
  return (
    cred.reviews_required > 0 ||
    Object.values(cred.risk_reviews).some((rule) => (rule?.reviews_required ?? 0) > 0)
  );
}

/** The requirement in words, for the audit entry of a submission: "2 approval(s) from admins; risk ddl: …". */
export function requirementNote(need: Requirement): string {
  const from = need.approver_role
    ? ` from ${need.approver_role === 'admin' ? 'admins' : 'super admins'}`
    : '';
  return `${need.reviews_required} approval(s)${from}${need.level ? `; risk ${need.level}: ${need.why}` : ''}`;
}
