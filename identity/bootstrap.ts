import { randomBytes } from 'node:crypto';
import type { Sql } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { countOrganizations, insertOrganization } from '../store/users.ts';
import { createApiKey, createUser } from './manage.ts';

export interface BootstrapInput {
  adminEmail: string | null;
  adminPassword: string | null;
  apiKey: string | null;
}

export interface BootstrapResult {
  orgId: string;
  adminEmail: string;
  /** Secrets generated now, to be printed once; null when they came from the environment. */
  generatedPassword: string | null;
  generatedApiKey: string | null;
}

/**
 * On first start with an empty store: one organization, one super admin and one API key.
 * Returns null when the store already has an organization (nothing is created twice, even
 * when several replicas start at once: the insert runs under an advisory lock).
 */
export async function bootstrap(sql: Sql, input: BootstrapInput): Promise<BootstrapResult | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${0x626f6f74})`;
    if ((await countOrganizations(tx)) > 0) return null;
    const org = await insertOrganization(tx, { id: newId('org'), name: 'Default organization' });
    const generatedPassword = input.adminPassword ? null : randomBytes(18).toString('base64url');
    const email = input.adminEmail ?? 'admin@countersign.local';
    const admin = await createUser(tx, {
      orgId: org.id,
      email,
      name: 'Administrator',
      role: 'super_admin',
      password: input.adminPassword ?? generatedPassword,
    });
    const key = await createApiKey(tx, {
      orgId: org.id,
      name: 'first key',
      createdBy: admin.id,
      // The first key is the first super admin's: it works as them, and dies with them.
      ownerUserId: admin.id,
      ...(input.apiKey ? { secret: input.apiKey } : {}),
    });
    return {
      orgId: org.id,
      adminEmail: email,
      generatedPassword,
      generatedApiKey: input.apiKey ? null : key.secret,
    };
  });
}
