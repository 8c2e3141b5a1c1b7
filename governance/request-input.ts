// The inputs of a query request's edit and review, as the REST routes and the Reviews page both
// send them (governance/requests.ts editRequest and reviewRequest check them): one schema each,
// one set of field errors.
import * as v from 'valibot';

export const Statement = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(100_000));
export const Params = v.pipe(
  v.array(v.union([v.string(), v.number(), v.boolean(), v.null()])),
  v.maxLength(1000),
);

/** A new revision of a pending request (approvals so far are voided when the SQL changes). */
export const RequestEdit = v.object({
  statement: v.optional(Statement),
  params: v.optional(Params),
  run_on_approval: v.optional(v.boolean()),
});

/** A reviewer's comment, alone or with an approval or a rejection. */
export const ReviewComment = v.object({ comment: v.optional(v.pipe(v.string(), v.maxLength(10_000)), '') });
