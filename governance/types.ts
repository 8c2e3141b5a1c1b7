// The pipeline's vocabulary: who asks (actor, origin), what (a governed query) and what comes
// back. Its own file so that every step of the pipeline can name these without importing the
// pipeline itself (no import cycle: query.ts -> steps -> types.ts).
import type { ParamValue, QueryResult } from '../adapters/types.ts';
import type { QueryActor, QueryOrigin } from '../audit/actors.ts';
import type { PoolSource } from '../core/deps.ts';
import type { Logger } from '../core/logger.ts';
import type { RequestNotifier } from '../integrations/review-notices.ts';
import type { Keyring } from '../store/crypto.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';
import type { Sql } from '../store/db.ts';
import type { Delivery, StepAttempt } from './once.ts';

// Who asks lives in audit/ (every domain records it); named here too for the pipeline's steps.
export type { AiClientLimits, QueryActor, QueryOrigin } from '../audit/actors.ts';

/** One query through the pipeline. */
export interface GovernedQuery {
  orgId: string;
  actor: QueryActor;
  origin: QueryOrigin;
  databaseId: string;
  /** The credential to run as; the database's default credential when omitted. */
  credentialId?: string | null | undefined;
  /** SQL text in the adapter's placeholder style; user values only in `params`. */
  statement: string;
  params: ParamValue[];
  /** A caller's own cap (previews); the pipeline never returns more than HARD_MAX_ROWS. */
  maxRows?: number;
  /** Seconds; defaults to the credential's timeout, else DEFAULT_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /**
   * Only a read may run (dashboard panels): a statement classified as a write is denied, and
   * what is run runs in the engine's read-only transaction or session, so a write the
   * classification cannot see (a user-defined function) fails instead of changing anything.
   */
  readOnly?: boolean;
  /**
   * A credential with reviews_required > 0: 'refuse' (the default) denies the query; callers
   * that can hand a pending request back to a person use `SubmittedQuery` instead.
   */
  onReviewRequired?: 'refuse';
  /**
   * A workflow query step's attempt: a write then runs exactly once where the target has
   * two-phase commit, and never alongside an earlier attempt's statement (governance/once.ts).
   */
  stepAttempt?: StepAttempt;
}

/** A query that becomes a query request when its credential requires reviews (REST, MCP). */
export interface SubmittedQuery extends Omit<GovernedQuery, 'onReviewRequired'> {
  onReviewRequired: 'submit';
  /** Run as soon as the last required approval arrives. */
  runOnApproval?: boolean;
  /** A super admin's acknowledged override of the review gate. */
  bypass?: BypassRequest | null;
  /** Why the author needs the query; required where the credential asks for it. */
  justification?: string | null;
}

export type GovernedOutcome = {
  status: 'executed';
  result: QueryResult;
  databaseId: string;
  credentialId: string;
  /** The query request it ran under (reviewed or bypassed), if any. */
  requestId?: string | null;
  auditId?: string;
  /** For a workflow step attempt: how its statement ran (governance/once.ts). */
  delivery?: Delivery;
  /**
   * The data-protection policy the statement was planned under (protection/index.ts), null when
   * none applied. A `recovered` delivery's rows were computed by an earlier attempt, under
   * whichever policy applied then.
   */
  policy: GoverningPolicy | null;
};

/**
 * A data-protection policy as it stood when it governed a statement. `version` is the policy
 * row's updated_at (ISO 8601), which changes whenever the policy or its rules do, so rows
 * computed under earlier rules are not mistaken for rows computed under the current ones.
 */
export interface GoverningPolicy {
  policyId: string;
  version: string;
}

/** The query waits for reviews as query request `requestId`. */
export interface PendingReviewOutcome {
  status: 'pending_review';
  requestId: string;
  databaseId: string;
  credentialId: string;
  reviewsRequired: number;
}

/** Decisions a policy may widen; absent, the strict defaults hold. */
export interface GovernancePolicy {
  /** DESIGN.md step 2: AI queries are read-only unless a policy allows more. */
  aiMayWrite?(ctx: {
    orgId: string;
    actor: QueryActor;
    db: DatabaseRow;
    cred: CredentialRow;
  }): Promise<boolean>;
}

export interface GovernanceDeps {
  sql: Sql;
  keyring: Keyring;
  logger: Logger;
  pools: PoolSource;
  /** Tells reviewers about new query requests; no notification without it. */
  notify?: RequestNotifier;
  policy?: GovernancePolicy;
  /** COUNTERSIGN_UNDO_RETENTION_DAYS (governance/undo/); 30 days without it. */
  config?: { undoRetentionDays: number };
}

/** A super admin's explicit override of the review gate (SPEC.md 2.2 review_bypass_allowed). */
export interface BypassRequest {
  /** Must be exactly true: the override is never implied. */
  acknowledged: boolean;
  reason?: string | null;
}
