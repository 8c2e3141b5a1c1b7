// get_data_protection: what the caller's data-protection policy does to results, per database
// (governance/protection describeProtection).
import { describeProtection } from '../../governance/protection/index.ts';
import { aiDatabases, aiTarget, type ToolContext } from './context.ts';

export async function describeDataProtection(ctx: ToolContext, databaseId?: string): Promise<unknown> {
  const targets = databaseId
    ? [await aiTarget(ctx, databaseId)]
    : (await aiDatabases(ctx)).flatMap(({ db, credentials }) => {
        const cred = credentials.find((c) => c.default_credential) ?? credentials[0];
        return cred ? [{ db, cred }] : [];
      });
  const databases = [];
  for (const { db, cred } of targets) {
    const described = await describeProtection(ctx.deps, { orgId: ctx.orgId, db, cred, actor: ctx.actor });
    databases.push({ database_id: db.id, name: db.name, ...described });
  }
  return { databases };
}
