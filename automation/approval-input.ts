// An approver's decision, as POST /api/v1/workflows/:id/runs/:runId/approvals and the run page's
// (and Reviews inbox's) approval form both send it: decideApproval checks it, so both doors answer
// the same field errors, and an unknown decision is refused rather than read as one of the two.
import * as v from 'valibot';

export const DecisionInput = v.object({
  decision: v.optional(v.picklist(['approve', 'reject'], 'decision must be approve or reject'), 'approve'),
  comment: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000))), null),
});
export type DecisionBody = v.InferInput<typeof DecisionInput>;
