// What each destructive form of the pages does, said before it is done (kit/confirm.tsx). Every
// lookup is scoped to the signed-in person's organization and, for databases, to what they see.

import { findWorkflowDefinition } from '../../automation/definitions.ts';
import type { Deps } from '../../core/deps.ts';
import { peopleCovered, peopleLosingPolicy } from '../../governance/protection/coverage.ts';
import { listPolicies, type PolicyView } from '../../governance/protection/policies.ts';
import { myTokens } from '../../identity/account.ts';
import { listOrgApiKeys } from '../../identity/api-keys.ts';
import { findPerson, listPeople } from '../../identity/directory.ts';
import { listConnectedClients } from '../../identity/oauth-grants.ts';
import { ROLES } from '../../identity/people.ts';
import { listAgents } from '../../registry/agents.ts';
import { getDatabase, listDatabases } from '../../registry/databases.ts';
import { listCredentialAccess, listDatabaseGrants } from '../../registry/grants.ts';
import type { Role, UserRow } from '../../store/users.ts';
import { dashboardConfirmations } from './dashboards/confirm-rules.ts';
import type { ConfirmRule } from './kit/confirm.tsx';
import { pageCaller } from './kit/page-context.tsx';

const ADMINS: readonly Role[] = ['admin', 'super_admin'];
const names = (people: UserRow[]) => people.map((p) => p.email).join(', ');
const columnOf = (r: PolicyView['rules'][number]) =>
  `${r.schema_name ? `${r.schema_name}.` : ''}${r.table_name}.${r.column_name}`;

/** The confirmation rules of every revoke, delete and remove form of the web UI. */
export function confirmationRules(deps: Deps): ConfirmRule[] {
  const orgOf = (c: Parameters<ConfirmRule['describe']>[0]) => c.get('principal').orgId;
  const database = async (c: Parameters<ConfirmRule['describe']>[0], id: string) => {
    try {
      return await getDatabase(deps.sql, pageCaller(c), id);
    } catch {
      return null;
    }
  };
  const policyOf = async (c: Parameters<ConfirmRule['describe']>[0], dbId: string, pid: string) => {
    if (!(await database(c, dbId))) return null;
    const policies = await listPolicies(deps.sql, orgOf(c), dbId);
    const view = policies.find((p) => p.policy.id === pid);
    return view ? { policies, view, people: await listPeople(deps.sql, pageCaller(c)) } : null;
  };
  const unprotected = (who: UserRow[], columns: string[]) =>
    who.length === 0
      ? 'Nobody is under this policy now, so nobody sees more than before.'
      : `${names(who)} will see ${columns.join(', ') || 'its columns'} in clear.`;

  return [
    ...dashboardConfirmations(deps),
    {
      path: '/databases/:id/policies/:pid/rules/:index/delete',
      roles: ADMINS,
      async describe(c, p) {
        const found = await policyOf(c, p.id!, p.pid!);
        const rule = found?.view.rules[Number(p.index)];
        if (!found || !rule) return null;
        const who = peopleCovered(
          found.policies.flatMap((x) => x.assignments),
          found.people,
          p.pid!,
        );
        return {
          title: `Remove the ${rule.action} rule on ${columnOf(rule)}?`,
          consequences: [
            `People who lose this protection: ${who.length > 0 ? names(who) : 'nobody (the policy is assigned to no one)'}.`,
            unprotected(who, [columnOf(rule)]),
          ],
          button: 'Remove the rule',
          back: `/databases/${p.id}/policies/${p.pid}`,
        };
      },
    },
    {
      path: '/databases/:id/policies/:pid/delete',
      roles: ADMINS,
      async describe(c, p) {
        const found = await policyOf(c, p.id!, p.pid!);
        if (!found) return null;
        const who = peopleCovered(
          found.policies.flatMap((x) => x.assignments),
          found.people,
          p.pid!,
        );
        return {
          title: `Delete the policy ${found.view.policy.name}?`,
          consequences: [
            `People who lose its protection: ${who.length > 0 ? names(who) : 'nobody'}.`,
            unprotected(who, found.view.rules.map(columnOf)),
          ],
          button: 'Delete the policy',
          back: `/databases/${p.id}/policies/${p.pid}`,
        };
      },
    },
    {
      // Saving assignments only needs a confirmation when it takes someone out of the policy.
      path: '/databases/:id/policies/:pid/assignments',
      roles: ADMINS,
      async describe(c, p) {
        const found = await policyOf(c, p.id!, p.pid!);
        if (!found) return null;
        const users = (await c.req.formData())
          .getAll('users')
          .filter((u): u is string => typeof u === 'string');
        const roles = ROLES.filter((r) => c.get('form')[`role_${r}`] === 'on');
        const losing = peopleLosingPolicy(found.policies, found.people, p.pid!, { users, roles });
        if (losing.length === 0) return null;
        return {
          title: `Take ${losing.length} ${losing.length === 1 ? 'person' : 'people'} out of ${found.view.policy.name}?`,
          consequences: [
            `People who lose its protection: ${names(losing)}.`,
            unprotected(losing, found.view.rules.map(columnOf)),
          ],
          button: 'Save the assignments',
          back: `/databases/${p.id}/policies/${p.pid}`,
        };
      },
    },
    {
      path: '/databases/:id/credentials/:cid/delete',
      roles: ADMINS,
      async describe(c, p) {
        const found = await database(c, p.id!);
        const cred = found?.credentials.find((x) => x.id === p.cid);
        if (!found || !cred) return null;
        return {
          title: `Remove the credential ${cred.username} of ${found.db.name}?`,
          consequences: [
            'Queries, dashboards and workflow steps that name it fail from now on.',
            'Its grants go with it; its stored password is deleted and cannot be shown again.',
          ],
          button: 'Remove the credential',
          back: `/databases/${p.id}`,
        };
      },
    },
    {
      path: '/databases/:id/credentials/:cid/grants/:gid/delete',
      roles: ADMINS,
      async describe(c, p) {
        const found = await database(c, p.id!);
        const cred = found?.credentials.find((x) => x.id === p.cid);
        const grant = cred
          ? (await listCredentialAccess(deps.sql, pageCaller(c), p.id!, cred.id)).grants.find(
              (g) => g.id === p.gid,
            )
          : null;
        if (!found || !cred || !grant) return null;
        const who = grant.role
          ? `everyone with role ${grant.role}`
          : ((await findPerson(deps.sql, pageCaller(c), grant.user_id ?? ''))?.email ?? 'this person');
        return {
          title: `Stop ${who} from using ${cred.username}?`,
          consequences: [
            cred.restrict_access
              ? `${who} can no longer run queries as ${cred.username} on ${found.db.name} (unless another grant lets them).`
              : `${cred.username} is not restricted now, so nothing changes until it is.`,
          ],
          button: 'Remove the grant',
          back: `/databases/${p.id}`,
        };
      },
    },
    {
      path: '/databases/:id/grants/:userId/delete',
      roles: ADMINS,
      async describe(c, p) {
        const found = await database(c, p.id!);
        const grant = found
          ? (await listDatabaseGrants(deps.sql, pageCaller(c), found.db.id)).find(
              (g) => g.user_id === p.userId,
            )
          : null;
        if (!found || !grant) return null;
        return {
          title: `Revoke ${grant.email}'s access to ${found.db.name}?`,
          consequences: [
            `${found.db.name} disappears for ${grant.email}: no query, dashboard panel or AI client of theirs reaches it.`,
            'Their query requests waiting for review there can no longer run.',
          ],
          button: 'Revoke access',
          back: `/databases/${p.id}`,
        };
      },
    },
    {
      path: '/people/:id/delete',
      roles: ADMINS,
      async describe(c, p) {
        const user = await findPerson(deps.sql, pageCaller(c), p.id!);
        if (!user) return null;
        return {
          title: `Delete ${user.email}?`,
          consequences: [
            'They are signed out everywhere; their personal tokens, API keys and AI clients stop working.',
            'Their grants go; what they did stays in the audit log under their name.',
          ],
          button: `Delete ${user.email}`,
          back: '/people',
        };
      },
    },
    {
      path: '/people/:id/disable',
      roles: ADMINS,
      async describe(c, p) {
        const user = await findPerson(deps.sql, pageCaller(c), p.id!);
        if (!user) return null;
        return {
          title: `Disable ${user.email}?`,
          consequences: [
            'They are signed out everywhere; their tokens and AI clients stop working until they are enabled again.',
          ],
          button: `Disable ${user.email}`,
          back: '/people',
        };
      },
    },
    {
      path: '/organization/api-keys/:id/revoke',
      roles: ADMINS,
      async describe(c, p) {
        const key = (await listOrgApiKeys(deps.sql, pageCaller(c))).find((k) => k.id === p.id);
        if (!key) return null;
        return {
          title: `Revoke the API key ${key.name}?`,
          consequences: [
            'Every script, workflow trigger and integration that sends it is refused from now on.',
            'A revoked key cannot be restored: a new one has to be created and handed out.',
          ],
          button: 'Revoke the key',
          back: '/organization',
        };
      },
    },
    {
      path: '/organization/agents/:id/revoke',
      roles: ADMINS,
      async describe(c, p) {
        const agent = (await listAgents(deps, orgOf(c))).find((a) => a.id === p.id);
        if (!agent) return null;
        const behind = (await listDatabases(deps.sql, pageCaller(c), { limit: 1000 })).items
          .map((i) => i.db)
          .filter((d) => d.agent_id === p.id);
        return {
          title: `Revoke the agent ${agent.name}?`,
          consequences: [
            behind.length > 0
              ? `${behind.map((d) => d.name).join(', ')} become unreachable: they are reached only through this agent.`
              : 'No database is reached through it.',
            'Its tunnel closes now and its token is refused from now on.',
          ],
          button: 'Revoke the agent',
          back: '/organization',
        };
      },
    },
    {
      path: '/organization/sso/delete',
      // Only a super admin may change sign-in (identity/sso.ts); an admin gets the handler's refusal.
      roles: ['super_admin'],
      async describe() {
        return {
          title: 'Turn single sign-on off?',
          consequences: [
            'People sign in with their Countersign password only; whoever has none needs a password link from the People page.',
          ],
          button: 'Turn single sign-on off',
          back: '/organization',
        };
      },
    },
    {
      path: '/settings/tokens/:id/revoke',
      async describe(c, p) {
        const token = (await myTokens(deps.sql, pageCaller(c))).find((t) => t.id === p.id);
        if (!token) return null;
        return {
          title: `Revoke your token ${token.name}?`,
          consequences: ['Scripts and tools that send it are refused from now on; it cannot be restored.'],
          button: 'Revoke the token',
          back: '/settings',
        };
      },
    },
    {
      path: '/settings/clients/:grantId/revoke',
      async describe(c, p) {
        const client = (await listConnectedClients(deps.sql, c.get('principal').userId)).find(
          (x) => x.grant_id === p.grantId,
        );
        if (!client) return null;
        return {
          title: `Disconnect ${client.client_name}?`,
          consequences: [
            `${client.client_name} loses access to your databases at once; it has to ask you again to reconnect.`,
          ],
          button: 'Disconnect',
          back: '/settings',
        };
      },
    },
    {
      path: '/workflows/:id/archive',
      roles: ADMINS,
      async describe(c, p) {
        const wf = await findWorkflowDefinition(deps, pageCaller(c), p.id!);
        if (!wf) return null;
        return {
          title: `Archive the workflow ${wf.name}?`,
          consequences: [
            'No new run can start, from the page, the API or a dashboard button.',
            wf.cron_schedule ? `Its schedule (${wf.cron_schedule}) is deleted.` : 'It has no schedule.',
            'Runs already under way go on to their end.',
          ],
          button: 'Archive the workflow',
          back: `/workflows/${p.id}`,
        };
      },
    },
  ];
}
