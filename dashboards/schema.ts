// Request bodies of the dashboard endpoints (SPEC.md 4.3; the shape of 2.3). Panels, details and
// actions are strict objects: a misspelt field is named in the 422 instead of silently dropped.
import * as v from 'valibot';
import { isValidInputName } from '../expr/index.ts';

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
const nonEmpty = (max: number, what: string) =>
  v.pipe(v.string(), v.trim(), v.minLength(1, `${what} is required`), v.maxLength(max));
const id = v.optional(v.nullable(text(40)), null);

const Mapping = v.strictObject({
  workflow_input_key: nonEmpty(100, 'workflow_input_key'),
  column: nonEmpty(200, 'column'),
});

const Action = v.strictObject({
  id,
  label: v.optional(v.nullable(text(200)), null),
  workflow_id: v.optional(v.nullable(text(40)), null),
  input_mappings: v.optional(v.pipe(v.array(Mapping), v.maxLength(100)), []),
});

const Input = v.strictObject({
  key: v.pipe(
    v.string(),
    v.check(isValidInputName, 'must be a name such as customer_id (letters, digits, _; not a keyword)'),
  ),
  description: v.optional(text(1000), ''),
});

const Details = v.strictObject({
  // SPEC.md 2.3: only query panels are supported.
  __type__: v.literal('query', 'only query panels are supported ("query")'),
  query: nonEmpty(100_000, 'query'),
  credential_id: nonEmpty(40, 'credential_id'),
  // How the page draws the result: a table, or a line or bar chart of its numeric columns.
  view: v.optional(v.picklist(['table', 'line', 'bar'], 'view is one of table, line, bar')),
});

export const PanelBody = v.strictObject({
  id,
  title: v.optional(text(200), ''),
  inputs: v.optional(v.pipe(v.array(Input), v.maxLength(50)), []),
  actions: v.optional(v.pipe(v.array(Action), v.maxLength(50)), []),
  details: Details,
});
export type PanelBody = v.InferOutput<typeof PanelBody>;

const Panels = v.pipe(v.array(PanelBody), v.maxLength(50));

/** POST /v1/dashboards: `name` and `restricted_access` required (SPEC.md 4.3). */
export const CreateDashboard = v.object({
  name: nonEmpty(200, 'name'),
  restricted_access: v.boolean('restricted_access is required (true or false)'),
  panels: v.optional(Panels, []),
});
export type CreateDashboard = v.InferOutput<typeof CreateDashboard>;

/** PUT /v1/dashboards/:id: every field optional; `panels`, when sent, replaces all panels. */
export const UpdateDashboard = v.object({
  name: v.optional(nonEmpty(200, 'name')),
  restricted_access: v.optional(v.boolean()),
  panels: v.optional(Panels),
});
export type UpdateDashboard = v.InferOutput<typeof UpdateDashboard>;

export const GrantBody = v.object({ user_id: nonEmpty(40, 'user_id') });

/** POST …/role-grants: everyone holding the role sees the restricted dashboard (super admins always do). */
export const RoleGrantBody = v.object({
  role: v.picklist(['admin', 'member'], 'role is admin or member'),
});
export type RoleGrantBody = v.InferOutput<typeof RoleGrantBody>;

/** POST …/panels/:panelId/run: input values by key; forms send text, so every value is a string. */
export const RunPanelBody = v.object({
  inputs: v.optional(v.record(v.string(), v.pipe(v.string(), v.maxLength(10_000))), {}),
});

/** POST …/actions/:actionId/run: the clicked row, as column name → cell value. */
export const RunActionBody = v.object({
  row: v.record(v.string(), v.union([v.string(), v.number(), v.boolean(), v.null()])),
});

export const ListDashboards = v.object({
  include_archived: v.optional(v.picklist(['true', 'false']), 'false'),
  after: v.optional(v.string()),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1), v.maxValue(200)),
    '50',
  ),
});
