// What the workflow benches share: an organization with the bench's PostgreSQL registered as a
// database, and the principal its runs start as (an automation's key: its service-account owner).
import * as v from 'valibot';
import type { Deps } from '../core/deps.ts';
import type { UserPrincipal } from '../identity/principal.ts';
import { CreateDatabase } from '../registry/database-input.ts';
import { createDatabase } from '../registry/databases.ts';
import { newId } from '../store/ids.ts';
import { insertOrganization, insertServiceAccount } from '../store/users.ts';
import type { SqlServer } from '../test/harness/servers.ts';

export interface BenchOrg {
  orgId: string;
  /** The default credential of the registered database (the server's superuser, no reviews). */
  credentialId: string;
  /** Starts runs as an automation's key does: as its (service account) owner. */
  principal: UserPrincipal;
}

/** A fresh organization with `pg` registered and a service account to start runs as. */
export async function benchOrg(deps: Deps, pg: SqlServer): Promise<BenchOrg> {
  const org = await insertOrganization(deps.sql, { id: newId('org'), name: 'bench' });
  const { credentials } = await createDatabase(
    deps,
    org.id,
    v.parse(CreateDatabase, {
      name: 'bench',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    }),
  );
  const svc = await insertServiceAccount(deps.sql, {
    id: newId('usr'),
    orgId: org.id,
    name: 'bench',
    role: 'admin',
  });
  return {
    orgId: org.id,
    credentialId: credentials[0]!.id,
    principal: {
      kind: 'user',
      orgId: org.id,
      userId: svc.id,
      email: svc.email,
      role: svc.role,
      via: 'api_key',
      credentialId: 'key_bench',
      serviceAccount: true,
    },
  };
}
