// POST /api/v1/workflows/validate and /:id/validate: the editor's as-you-type check. One
// definition of the rules: the same valibot schema and the same domain checks as POST and PATCH
// (automation/definitions.ts `checkWorkflow`), and nothing is written. The answer also carries the
// cron preview, so the page computes nothing itself.
import type { Context } from 'hono';
import * as v from 'valibot';
import { cronProblem, nextRuns } from '../../automation/cron.ts';
import { checkWorkflow } from '../../automation/definitions.ts';
import { CreateWorkflow } from '../../automation/schema.ts';
import { definitionWarnings } from '../../automation/validate.ts';
import type { Deps } from '../../core/deps.ts';
import type { AppEnv } from '../env.ts';
import { AppError, badRequest, problemFor, validationFailed } from '../errors.ts';
import { fieldErrors } from '../validate.ts';

/** How many upcoming cron times the preview lists. */
const PREVIEW_RUNS = 5;

/** Checks a full definition (the POST body shape) for the workflow `workflowId`, or a new one. */
export async function validateDefinition(
  deps: Deps,
  c: Context<AppEnv>,
  workflowId: string | null,
): Promise<Response> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw badRequest('the request body must be JSON');
  }
  const cron = (raw as { cron_schedule?: unknown } | null)?.cron_schedule;
  const cronNextRuns =
    typeof cron === 'string' && cron.trim() !== '' && cronProblem(cron) === null
      ? nextRuns(cron, new Date(), PREVIEW_RUNS).map((d) => d.toISOString())
      : [];
  const parsed = v.safeParse(CreateWorkflow, raw);
  // Said whether or not the rest is valid: the person is editing the schedule now.
  const warnings = parsed.success ? definitionWarnings(parsed.output) : [];
  let problem: AppError | null = parsed.success ? null : validationFailed(fieldErrors(parsed.issues));
  if (parsed.success) {
    try {
      await checkWorkflow(deps, c.get('principal').orgId, parsed.output, workflowId);
    } catch (err) {
      // Only a 422 is an answer about the definition; anything else (404, 502) is the request's.
      if (!(err instanceof AppError) || err.status !== 422) throw err;
      problem = err;
    }
  }
  if (!problem) return c.json({ valid: true, errors: [], warnings, cron_next_runs: cronNextRuns });
  // RFC 9457 §3.2: extension members ride beside the standard ones.
  const body = {
    ...problemFor(problem, deps.config.baseUrl, new URL(c.req.url).pathname),
    warnings,
    cron_next_runs: cronNextRuns,
  };
  return c.body(JSON.stringify(body), 422, { 'content-type': 'application/problem+json' });
}
