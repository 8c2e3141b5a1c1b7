// get_data_protection: what the caller's data-protection policy does to results, per database.
// Interim: reads the applicable policy through the store until governance/protection exports
// `describeProtection` (issue 6); the answer's shape stays the same when it switches.
import { applicablePolicy } from '../../store/data-protection.ts';
import { aiDatabases, aiTarget, type ToolContext } from './context.ts';

export async function describeDataProtection(ctx: ToolContext, databaseId?: string): Promise<unknown> {
  const dbs = databaseId ? [(await aiTarget(ctx, databaseId)).db] : (await aiDatabases(ctx)).map((d) => d.db);
  const databases = [];
  for (const db of dbs) {
    const applied = await applicablePolicy(ctx.deps.sql, db.id, ctx.actor.userId, ctx.actor.role);
    databases.push({
      database_id: db.id,
      name: db.name,
      policy: applied ? applied.policy.name : null,
      // A column no rule names is hidden under a policy (default deny); without one all are shown.
      unnamed_columns: applied ? 'hide' : 'show',
      // The policy's hash salt is never part of the answer.
      rules: (applied?.rules ?? []).map((r) => ({
        schema: r.schema_name,
        table: r.table_name,
        column: r.column_name,
        action: r.action,
        ...(r.action === 'partial' ? { keep_first: r.keep_first, keep_last: r.keep_last } : {}),
      })),
    });
  }
  return { databases };
}
