// Request bodies of the workflow endpoints (SPEC.md 4.1; field names in workflows/README.md).
// Actions are strict objects: a misspelt field is named in the 422 rather than silently ignored.
import * as v from 'valibot';
import { INPUT_TYPES, isIdentifier, isValidInputName } from '../expr/index.ts';

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
const nonEmpty = (max: number, what: string) =>
  v.pipe(v.string(), v.trim(), v.minLength(1, `${what} is required`), v.maxLength(max));
const timeout = v.optional(
  v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400))),
  null,
);

const QueryAction = v.strictObject({
  __type__: v.literal('query'),
  credential_id: nonEmpty(40, 'credential_id'),
  query: nonEmpty(100_000, 'query'),
  timeout_seconds: timeout,
});

const ApiAction = v.strictObject({
  __type__: v.literal('api'),
  endpoint: v.pipe(
    v.string(),
    v.regex(/^https?:\/\/[^\s/]/i, 'must be an http:// or https:// URL'),
    v.maxLength(4000),
  ),
  method: v.optional(v.picklist(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']), 'GET'),
  // null keeps the value stored for the same step and header (responses never show values).
  headers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name')),
      v.nullable(text(8000)),
    ),
    {},
  ),
  // A JSON template; an object or array is taken as its JSON text.
  body: v.optional(
    v.nullable(
      v.union([
        text(1_000_000),
        v.pipe(
          v.union([v.record(v.string(), v.unknown()), v.array(v.unknown())]),
          v.transform((x) => JSON.stringify(x)),
        ),
      ]),
    ),
    null,
  ),
  expected_status: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599)), 200),
  include_service_jwt: v.optional(v.boolean(), false),
  timeout_seconds: timeout,
});

const ChatAction = v.strictObject({
  __type__: v.literal('chat'),
  chat_channel: nonEmpty(200, 'chat_channel'),
  message: nonEmpty(40_000, 'message'),
  link_text: v.optional(v.nullable(text(200)), null),
});

const ChatReplyAction = v.strictObject({
  __type__: v.literal('chat_reply'),
  step_name: nonEmpty(100, 'step_name'),
  message: nonEmpty(40_000, 'message'),
});

const ApprovalAction = v.strictObject({
  __type__: v.literal('approval'),
  reviews_required: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 1),
  /** The approval's expiry: with no decision by then, the run ends as `on_timeout` says. */
  timeout_seconds: timeout,
  on_timeout: v.optional(v.picklist(['fail', 'reject'], 'must be fail or reject'), 'fail'),
});

const ConditionAction = v.strictObject({
  __type__: v.literal('condition'),
  expression: nonEmpty(10_000, 'expression'),
  on_false: v.optional(v.picklist(['succeed', 'fail']), 'fail'),
});

const Action = v.variant(
  '__type__',
  [QueryAction, ApiAction, ChatAction, ChatReplyAction, ApprovalAction, ConditionAction],
  'must be an object whose __type__ is one of api, approval, condition, query, chat, chat_reply',
);

const Permission = v.union(
  [
    v.strictObject({
      user_id: v.pipe(v.string(), v.regex(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a usr_ id')),
    }),
    v.strictObject({ role: v.picklist(['super_admin', 'admin', 'member']) }),
  ],
  'must be {"user_id": "usr_…"} or {"role": "admin"}',
);

const Step = v.object({
  id: v.optional(
    v.nullable(v.pipe(v.string(), v.regex(/^wfs_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a wfs_ id'))),
  ),
  name: v.pipe(
    v.string(),
    v.trim(),
    v.check(
      isIdentifier,
      'must be a name usable in step references: letters, digits and _, not starting with a digit',
    ),
    v.maxLength(100),
  ),
  condition: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(10_000))), null),
  action: Action,
  permissions: v.optional(v.array(Permission), []),
});

const Input = v.object({
  key: v.pipe(
    v.string(),
    v.check(isValidInputName, 'must be a name usable in references: letters, digits and _'),
  ),
  description: v.optional(text(2000), ''),
  type: v.picklist(INPUT_TYPES, 'must be one of string, float, integer, boolean'),
  /** A value of the input's type, used when a run gives none (cron runs need one for every input). */
  default: v.optional(
    v.nullable(v.union([v.pipe(v.string(), v.maxLength(10_000)), v.number(), v.boolean()])),
    null,
  ),
});

const fields = {
  name: nonEmpty(200, 'name'),
  group: v.optional(v.nullable(nonEmpty(200, 'group')), null),
  cron_schedule: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(200))), null),
  trigger_tracker_label: v.optional(
    v.nullable(v.object({ name: nonEmpty(200, 'trigger_tracker_label.name') })),
    null,
  ),
  inputs: v.optional(v.array(Input), []),
  steps: v.optional(v.pipe(v.array(Step), v.maxLength(200)), []),
  // Who may start the workflow (and read its runs); [] admits every person of the organization.
  run_permissions: v.optional(
    v.pipe(
      v.array(Permission),
      v.maxLength(200),
      v.description(
        'Who may start the workflow and read its runs: [{"user_id": "usr_…"} | {"role": "member"}]. ' +
          'Empty (the default): every person of the organization. Super admins and organization API keys always may.',
      ),
    ),
    [],
  ),
};

/** POST /api/v1/workflows: `name` required, every other field optional (null or [] when unset). */
export const CreateWorkflow = v.object(fields);

/** PATCH /api/v1/workflows/:id: only the fields present change. */
export const PatchWorkflow = v.object({
  name: v.optional(fields.name),
  group: v.optional(v.nullable(nonEmpty(200, 'group'))),
  cron_schedule: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(200)))),
  trigger_tracker_label: v.optional(
    v.nullable(v.object({ name: nonEmpty(200, 'trigger_tracker_label.name') })),
  ),
  inputs: v.optional(v.array(Input)),
  steps: v.optional(v.pipe(v.array(Step), v.maxLength(200))),
  run_permissions: v.optional(v.pipe(v.array(Permission), v.maxLength(200))),
});

export type CreateWorkflowBody = v.InferOutput<typeof CreateWorkflow>;
export type PatchWorkflowBody = v.InferOutput<typeof PatchWorkflow>;
export type StepBody = v.InferOutput<typeof Step>;
