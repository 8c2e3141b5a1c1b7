// Data protection decided when a request is submitted or edited (DESIGN.md pipeline step 5, run
// early): what the policy would refuse at execution is refused before anyone spends a review on it.
import type { ParamValue } from '../adapters/types.ts';
import type { CredentialRow, DatabaseRow } from '../store/databases.ts';
import { ProtectionParseError, ProtectionRefusedError, planProtection } from './protection/index.ts';
import type { GovernanceDeps, QueryActor } from './types.ts';

export interface SubmitCheck {
  orgId: string;
  db: DatabaseRow;
  cred: CredentialRow;
  /** The author: their policy is the one the statement will run under. */
  actor: QueryActor;
  policyId?: string | null;
  statement: string;
  params: ParamValue[];
  /** An undo's inverse, bound to the rows its write kept (RuleBook.restoresKeptRows). */
  restoresKeptRows?: boolean;
}

/**
 * The refusal data protection would give the author's statement at execution, or null. Only
 * refusals count: an unknown table may exist by the time the request runs (an approved DDL
 * request before it), and the server answers that then.
 */
export async function protectionRefusal(
  deps: GovernanceDeps,
  x: SubmitCheck,
): Promise<ProtectionRefusedError | ProtectionParseError | null> {
  try {
    await planProtection(deps, x);
    return null;
  } catch (err) {
    if (err instanceof ProtectionRefusedError || err instanceof ProtectionParseError) return err;
    return null;
  }
}
