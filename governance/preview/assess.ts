// The risk level of a write as its author submits or edits it (risk-rules.ts says what each level
// requires). Apart from the rules so that what a level requires can be read without the preview.
import type { ParamValue } from '../../adapters/types.ts';
import type { CredentialRow, DatabaseRow } from '../../store/databases.ts';
import { encodeParams } from '../params.ts';
import { requirementFor, stricter, strictest } from '../risk-rules.ts';
import type { GovernanceDeps, QueryActor } from '../types.ts';
import { computePreview } from './index.ts';
import { type Risk, riskOf } from './risk.ts';
import { previewPlan } from './statements.ts';

/**
 * Assesses a statement as `author` submits or edits it: its risk level (null for a read) with
 * the count of rows it touches read as the author's own preview would read them. The count is
 * read only when it can change what the write requires.
 */
export async function assessRisk(
  deps: GovernanceDeps,
  s: {
    orgId: string;
    db: DatabaseRow;
    cred: CredentialRow;
    author: QueryActor;
    statement: string;
    params: ParamValue[];
    classification: 'read' | 'write';
  },
): Promise<Risk | null> {
  if (s.classification !== 'write') return null;
  const plan = await previewPlan(s.db.adapter, s.statement);
  if (plan.kind === 'none') return strictest(s.cred, `its risk could not be assessed: ${plan.reason}`);
  const fixed = riskOf(plan, null, s.cred.large_write_rows);
  if (fixed.level !== 'ordinary' || plan.kind !== 'rows') return fixed;
  // The count costs a round trip to the target: it is read only when a large write needs more
  // than an ordinary one (else the level changes nothing; the reviewers' preview still shows it).
  if (!stricter(requirementFor(s.cred, { level: 'large', why: '' }), requirementFor(s.cred, fixed)))
    return fixed;
  const preview = await computePreview(
    deps,
    {
      org_id: s.orgId,
      database_id: s.db.id,
      credential_id: s.cred.id,
      statement: s.statement,
      params: encodeParams(s.params),
    },
    s.author,
  );
  if (preview.count !== null) return preview.risk;
  return {
    level: 'large',
    why: `the rows it touches could not be counted (${preview.note ?? preview.status}), so it is held to the large level`,
  };
}
