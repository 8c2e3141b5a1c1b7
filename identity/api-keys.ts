// Who may hold which API key. A key carries its owner's identity and never more (authenticate.ts):
// an owned key is the person who made it; a service account key is a users row that cannot sign
// in, with its own role (member or admin, never super admin), grants and data-protection policy
// through the same user_id tables as a person's. Marking a key for x-act-as-user is a super
// admin's own act, never a key's.

import * as v from 'valibot';
import type { QueryActor } from '../audit/actors.ts';
import { actorIsAdmin, type Caller } from '../audit/actors.ts';
import { recordEvent } from '../audit/events.ts';
import { forbidden, notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { type ApiKeyListing, type ApiKeyRow, listApiKeys, setApiKeyActAs } from '../store/api-keys.ts';
import type { Sql } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { insertServiceAccount, type UserRow } from '../store/users.ts';
import { createApiKey } from './manage.ts';
import { isPersonInPerson, type Principal } from './principal.ts';

/**
 * A new API key, as POST /api/v1/api-keys and the Organization page's form both send it: checked
 * here, by issueApiKey, so both doors answer the same field errors.
 */
export const ApiKeyInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200)),
  // Absent: the key is the caller's own. Present: a new service account owns it.
  service_account: v.optional(
    v.object({
      name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
      role: v.picklist(['member', 'admin'], 'role must be member or admin'),
    }),
  ),
  act_as_allowed: v.optional(v.boolean()),
});
export type ApiKeyBody = v.InferInput<typeof ApiKeyInput>;

/** A change to a key: may it act for users (x-act-as-user). */
export const ApiKeyChange = v.object({ act_as_allowed: v.boolean() });

/** A super admin in person: their session or personal token, not a key nor a service account. */
function superAdminInPerson(p: Principal): boolean {
  return p.role === 'super_admin' && isPersonInPerson(p);
}

export async function issueApiKey(
  sql: Sql,
  p: Principal,
  actor: QueryActor,
  body: ApiKeyBody,
): Promise<{
  key: ApiKeyRow;
  secret: string;
  owner: Pick<UserRow, 'id' | 'email' | 'name' | 'role'> & { service_account: boolean };
}> {
  // A key acting for someone would mint that person a key it could use without the header.
  if (p.actedBy) throw forbidden('an API key acting for a person (x-act-as-user) cannot create keys');
  const parsed = parseInput(ApiKeyInput, body);
  const input = {
    name: parsed.name,
    serviceAccount: parsed.service_account,
    actAsAllowed: parsed.act_as_allowed,
  };
  if (input.actAsAllowed && !superAdminInPerson(p))
    throw forbidden(
      'only a super admin, signed in or with a personal token, may allow a key to act for users',
    );
  // A service account is the caller's to make, so it never outranks them.
  if (input.serviceAccount?.role === 'admin' && p.role === 'member')
    throw validationFailed([{ path: 'service_account.role', message: 'cannot exceed your own role' }]);
  return sql.begin(async (tx) => {
    const owner = input.serviceAccount
      ? await insertServiceAccount(tx, {
          id: newId('usr'),
          orgId: p.orgId,
          name: input.serviceAccount.name ?? input.name,
          role: input.serviceAccount.role,
        })
      : { id: p.userId, email: p.email, name: '', role: p.role, service_account: p.serviceAccount === true };
    const { key, secret } = await createApiKey(tx, {
      orgId: p.orgId,
      name: input.name,
      createdBy: p.userId,
      ownerUserId: owner.id,
      actAsAllowed: input.actAsAllowed === true,
    });
    await recordEvent(tx, {
      orgId: p.orgId,
      actor,
      origin: 'user',
      event: 'api_key.create',
      subject: {
        api_key_id: key.id,
        owner_user_id: owner.id,
        service_account: owner.service_account,
        act_as_allowed: key.act_as_allowed,
      },
      outcome: 'allowed',
      detail: `${owner.service_account ? `service account ${owner.role}` : 'owned'} key ${key.name}`,
    });
    return {
      key,
      secret,
      owner: {
        id: owner.id,
        email: owner.email,
        name: owner.name,
        role: owner.role,
        service_account: owner.service_account,
      },
    };
  });
}

/** Marks a key for x-act-as-user or clears the mark: a super admin in person only, audited. */
export async function markApiKeyActAs(
  sql: Sql,
  p: Principal,
  actor: QueryActor,
  id: string,
  allowed: boolean,
): Promise<void> {
  if (!superAdminInPerson(p))
    throw forbidden(
      'only a super admin, signed in or with a personal token, may allow a key to act for users',
    );
  await sql.begin(async (tx) => {
    if (!(await setApiKeyActAs(tx, p.orgId, id, allowed))) throw notFound('no such API key');
    await recordEvent(tx, {
      orgId: p.orgId,
      actor,
      origin: 'user',
      event: 'api_key.act_as_allowed',
      subject: { api_key_id: id, act_as_allowed: allowed },
      outcome: 'allowed',
      detail: allowed ? 'the key may act for users' : 'the key may no longer act for users',
    });
  });
}

/** The organization's API keys, revoked ones included; admins only (SPEC.md 4.1). */
export async function listOrgApiKeys(sql: Sql, caller: Caller): Promise<ApiKeyListing[]> {
  if (!actorIsAdmin(caller.actor)) throw forbidden('only an admin may list API keys');
  return listApiKeys(sql, caller.orgId);
}
