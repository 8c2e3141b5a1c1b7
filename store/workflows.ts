import type { AdapterName } from '../adapters/types.ts';
import type { InputDefinition, Permission, StepDefinition } from '../workflows/types.ts';
import type { Tx } from './db.ts';

/** A stored workflow definition (SPEC.md 2.1). API step header values in `steps` are sealed. */
export interface WorkflowRow {
  id: string;
  org_id: string;
  name: string;
  group_name: string | null;
  cron_schedule: string | null;
  tracker_label_id: string | null;
  tracker_label_name: string | null;
  inputs: InputDefinition[];
  steps: StepDefinition[];
  /** Who may start it (workflows/README.md "Who may start and read"); [] = every person. */
  run_permissions: Permission[];
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
}

export type WorkflowFields = Pick<
  WorkflowRow,
  | 'name'
  | 'group_name'
  | 'cron_schedule'
  | 'tracker_label_id'
  | 'tracker_label_name'
  | 'inputs'
  | 'steps'
  | 'run_permissions'
>;

export async function insertWorkflow(
  sql: Tx,
  id: string,
  orgId: string,
  f: WorkflowFields,
): Promise<WorkflowRow> {
  const [row] = await sql<WorkflowRow[]>`
    insert into workflows (id, org_id, name, group_name, cron_schedule, tracker_label_id, tracker_label_name, inputs,
                           steps, run_permissions)
    values (${id}, ${orgId}, ${f.name}, ${f.group_name}, ${f.cron_schedule}, ${f.tracker_label_id},
            ${f.tracker_label_name}, ${sql.json(json(f.inputs))}, ${sql.json(json(f.steps))},
            ${sql.json(json(f.run_permissions))})
    returning *`;
  return row!;
}

export async function updateWorkflow(sql: Tx, id: string, f: WorkflowFields): Promise<WorkflowRow> {
  const [row] = await sql<WorkflowRow[]>`
    update workflows set name = ${f.name}, group_name = ${f.group_name}, cron_schedule = ${f.cron_schedule},
      tracker_label_id = ${f.tracker_label_id}, tracker_label_name = ${f.tracker_label_name},
      inputs = ${sql.json(json(f.inputs))}, steps = ${sql.json(json(f.steps))},
      run_permissions = ${sql.json(json(f.run_permissions))}, updated_at = now()
    where id = ${id}
    returning *`;
  return row!;
}

/** SPEC.md 3: archiving keeps the row; an archived workflow never runs again. */
export async function archiveWorkflow(sql: Tx, id: string): Promise<WorkflowRow> {
  const [row] = await sql<WorkflowRow[]>`
    update workflows set archived_at = coalesce(archived_at, now()), updated_at = now() where id = ${id} returning *`;
  return row!;
}

/** The workflow in the organization, archived or not; `forUpdate` locks it for a read-modify-write. */
export async function findWorkflow(
  sql: Tx,
  orgId: string,
  id: string,
  forUpdate = false,
): Promise<WorkflowRow | null> {
  const [row] = await sql<WorkflowRow[]>`
    select * from workflows where id = ${id} and org_id = ${orgId} ${forUpdate ? sql`for update` : sql``}`;
  return row ?? null;
}

/** The workflow whatever its organization (cron launches know only the id). */
export async function findWorkflowById(sql: Tx, id: string): Promise<WorkflowRow | null> {
  const [row] = await sql<WorkflowRow[]>`select * from workflows where id = ${id}`;
  return row ?? null;
}

/** In id order after `after`; one group when given; archived ones only when asked. */
export async function listWorkflows(
  sql: Tx,
  orgId: string,
  opts: { group?: string | undefined; includeArchived: boolean; after?: string | undefined; limit: number },
): Promise<WorkflowRow[]> {
  return sql<WorkflowRow[]>`
    select * from workflows
    where org_id = ${orgId}
      ${opts.group !== undefined ? sql`and group_name = ${opts.group}` : sql``}
      ${opts.includeArchived ? sql`` : sql`and archived_at is null`}
      ${opts.after ? sql`and id > ${opts.after}` : sql``}
    order by id
    limit ${opts.limit}`;
}

/** Active workflows triggered by any of these tracker label ids (webhooks carry label ids). */
export async function workflowsForTrackerLabels(sql: Tx, labelIds: string[]): Promise<WorkflowRow[]> {
  if (labelIds.length === 0) return [];
  return sql<WorkflowRow[]>`
    select * from workflows
    where tracker_label_id in ${sql(labelIds)} and archived_at is null
    order by id`;
}

/** The database a credential belongs to, within the organization: query steps name only the credential. */
export async function findCredentialTarget(
  sql: Tx,
  orgId: string,
  credentialId: string,
): Promise<{ database_id: string; adapter: AdapterName; timeout: number | null } | null> {
  const [row] = await sql<{ database_id: string; adapter: AdapterName; timeout: number | null }[]>`
    select c.database_id, d.adapter, c.timeout from credentials c join databases d on d.id = c.database_id
    where c.id = ${credentialId} and d.org_id = ${orgId}`;
  return row ?? null;
}

// postgres.js types sql.json's argument as its own JSON type; our definitions are plain JSON data.
type JsonValue = Parameters<Tx['json']>[0];
function json(value: unknown): JsonValue {
  return value as JsonValue;
}
