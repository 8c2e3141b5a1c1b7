// People of an organization, managed by its admins: invite with a one-time link to
// set a password, change role, disable and enable, delete. Every change of who may do what is an
// event in the organization's audit chain. Disabling ends the person's sessions, personal tokens
// and AI-client grants at once, so enabling them again does not bring old credentials back.
// Super admins are managed only by a super admin person: an organization API key may have been
// made by an admin, and through it that admin would otherwise make themselves super admin.

import * as v from 'valibot';
import type { Caller, QueryActor } from '../audit/actors.ts';
import type { EventSubjects, EventType } from '../audit/event-types.ts';
import { recordEvent } from '../audit/events.ts';
import { conflict, forbidden, notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { findApiKey, revokeOwnedApiKeys } from '../store/api-keys.ts';
import type { Sql, Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { revokeAllUserGrants } from '../store/oauth.ts';
import { revokeAllPersonalTokens } from '../store/personal-tokens.ts';
import { hashPassword, mintSecret, parseSecret, secretMatches } from '../store/secrets.ts';
import { revokeOtherSessions } from '../store/sessions.ts';
import {
  findPasswordSetup,
  findUserByEmail,
  findUserById,
  insertPasswordSetup,
  insertUser,
  lockActiveSuperAdmins,
  markUserDeleted,
  ROLES,
  type Role,
  setPasswordHash,
  setUserDisabled,
  spendPasswordSetups,
  type UserRow,
  updateUser,
  usePasswordSetup,
} from '../store/users.ts';
import { MIN_PASSWORD_LENGTH } from './manage.ts';

/** The roles a person may have, for the forms and schemas that name them. */
export { ROLES };

const RoleInput = v.picklist(ROLES, 'must be super_admin, admin or member');

/**
 * A person to invite, as POST /api/v1/users and the People page's form both send it: checked
 * here, by invitePerson, so both doors answer the same field errors.
 */
export const InviteInput = v.pipe(
  v.object({
    email: v.pipe(v.string(), v.trim(), v.email('must be an email address'), v.maxLength(320)),
    name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(200)), ''),
    role: RoleInput,
  }),
  v.description('A person to invite; the response carries their one-time set-password link, once.'),
  v.examples([{ email: 'ada@example.com', name: 'Ada Lovelace', role: 'member' }]),
);
export type InviteBody = v.InferInput<typeof InviteInput>;

/** A change to a person (PATCH /api/v1/users/:id). */
export const PersonChange = v.pipe(
  v.object({
    name: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(200))),
    role: v.optional(RoleInput),
    disabled: v.optional(v.boolean()),
  }),
  v.description(
    'Any of: a new name, a new role, disabled true (ends every session, token and AI grant) or false.',
  ),
  v.examples([{ role: 'admin' }, { disabled: true }]),
);

/** Who manages people: an admin, a super admin, or the organization's API key. */
export type PeopleActor = Exclude<QueryActor, { kind: 'workflow_run' }>;

const SETUP_KIND = 'cspws';
/** How long an invitation or reset link works. */
export const SETUP_LINK_DAYS = 7;

export interface SetupLink {
  url: string;
  expiresAt: Date;
}

/**
 * A super admin acting as themselves: not an API key, and not a key acting for them
 * (x-act-as-user), since a key proves only that someone with the key sent the request.
 */
export function isSuperAdminPerson(actor: PeopleActor): boolean {
  return actor.kind === 'user' && actor.role === 'super_admin' && actor.viaApiKeyId === undefined;
}

/** Admins (and the organization key) manage members and admins; only a super admin person touches super admins. */
function mayManage(actor: PeopleActor, roles: Role[]): void {
  if (roles.includes('super_admin')) {
    if (isSuperAdminPerson(actor)) return;
    throw forbidden(
      'only a super admin, signed in as themselves and not through an API key, can manage super admins',
    );
  }
  if (actor.kind === 'api_key' || actor.role === 'super_admin') return;
  if (actor.role !== 'admin') throw forbidden('this needs the admin role');
}

/**
 * Who may reset whose password: whoever resets can sign in as the target until the target
 * notices, so only someone strictly above them may. A member's password is reset by an admin
 * (or the organization key); an admin's only by a super admin person; a super admin's by no one
 * here — another super admin is an equal.
 */
function mayReset(actor: PeopleActor, target: UserRow): void {
  mayManage(actor, [target.role]);
  if (target.role === 'member') return;
  if (target.role === 'super_admin')
    throw forbidden('no one can reset the password of someone with an equal or higher role');
  if (!isSuperAdminPerson(actor))
    throw forbidden("only a super admin, signed in as themselves, can reset an admin's password");
}

async function person(sql: Tx, orgId: string, id: string): Promise<UserRow> {
  const user = await findUserById(sql, id);
  if (!user || user.org_id !== orgId || user.deleted_at !== null) throw notFound('no such person');
  return user;
}

function notSelf(actor: PeopleActor, userId: string, what: string): void {
  if (actor.kind === 'user' && actor.userId === userId) throw conflict(`you cannot ${what} yourself`);
}

/** The last super admin who can sign in stays one: someone must be able to administer. */
async function keepASuperAdmin(sql: Tx, orgId: string, leaving: UserRow): Promise<void> {
  if (leaving.role !== 'super_admin' || leaving.disabled_at !== null) return;
  const active = await lockActiveSuperAdmins(sql, orgId);
  if (active.length <= 1)
    throw conflict('the last active super admin cannot be demoted, disabled or deleted');
}

async function audit<K extends EventType>(
  sql: Tx,
  { orgId, actor, origin }: Caller<PeopleActor>,
  event: K,
  subject: EventSubjects[K],
  detail: string,
): Promise<void> {
  await recordEvent(sql, { orgId, actor, origin, event, subject, outcome: 'allowed', detail });
}

/** Invites a person: the account exists at once, and the link lets them choose a password. */
export async function invitePerson(
  sql: Sql,
  baseUrl: string,
  caller: Caller<PeopleActor>,
  body: InviteBody,
): Promise<{ user: UserRow; link: SetupLink }> {
  const { orgId, actor } = caller;
  const input = parseInput(InviteInput, body);
  mayManage(actor, [input.role]);
  return sql.begin(async (tx) => {
    if (await findUserByEmail(tx, orgId, input.email))
      throw validationFailed([{ path: 'email', message: 'someone already has this email address' }]);
    const user = await insertUser(tx, {
      id: newId('usr'),
      orgId,
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash: null,
    });
    const link = await newSetupLink(tx, baseUrl, caller, user.id);
    await audit(
      tx,
      caller,
      'user.created',
      { user_id: user.id, email: user.email, role: user.role },
      `invited ${user.email} as ${user.role}`,
    );
    return { user, link };
  });
}

/**
 * An admin's password reset: a new one-time link for the person to set their password (earlier
 * unused links stop working). A person who already had access loses it at once — sessions,
 * personal tokens and AI-client grants — since a reset is what an admin does when the password
 * may be in other hands. The reset is one audit event naming the person's address; the door that
 * asked delivers the link (e-mailed, or shown to the admin) after it is committed.
 */
export async function passwordLink(
  sql: Sql,
  baseUrl: string,
  caller: Caller<PeopleActor>,
  userId: string,
): Promise<SetupLink> {
  const { orgId, actor } = caller;
  return sql.begin(async (tx) => {
    const user = await person(tx, orgId, userId);
    mayReset(actor, user);
    const link = await newSetupLink(tx, baseUrl, caller, user.id);
    const ended = await endAccess(tx, user.id, 'an admin reset the password');
    await audit(
      tx,
      caller,
      'user.password_reset',
      {
        user_id: user.id,
        email: user.email,
        role: user.role,
        expires_at: link.expiresAt.toISOString(),
        ...ended,
      },
      `reset the password of ${user.email} (a new one-time link)`,
    );
    return link;
  });
}

/**
 * A one-time link; `issuer` null is the person's own request from the sign-in page (e-mailed to
 * their address), which carries no issuer's authority and lives `lifetimeMs`.
 */
export async function newSetupLink(
  tx: Tx,
  baseUrl: string,
  issuer: Caller<PeopleActor> | null,
  userId: string,
  lifetimeMs = SETUP_LINK_DAYS * 86_400_000,
): Promise<SetupLink> {
  const actor = issuer?.actor ?? null;
  const id = newId('pws');
  const minted = mintSecret(SETUP_KIND, id);
  const expiresAt = new Date(Date.now() + lifetimeMs);
  await insertPasswordSetup(tx, {
    id,
    userId,
    secretHash: minted.hash,
    createdBy: actor?.kind === 'user' ? actor.userId : null,
    createdByKey: !actor ? null : actor.kind === 'api_key' ? actor.apiKeyId : (actor.viaApiKeyId ?? null),
    expiresAt,
  });
  // The secret travels in the fragment-free query of a page that never sends a Referer elsewhere.
  return { url: `${baseUrl}/set-password?token=${encodeURIComponent(minted.secret)}`, expiresAt };
}

/**
 * The person a link is for, when it is well-formed, unused, unexpired and the person active —
 * and the admin (or API key) who issued it still active and still an admin (unrevoked): a link
 * carries its issuer's authority, which ends when theirs does (links of an admin disabled or
 * deleted are also spent at once, see endAccessAndLinks; this check covers a later demotion and a
 * revoked key too).
 */
export async function checkSetupLink(sql: Tx, secret: string): Promise<UserRow | null> {
  const parsed = parseSecret(secret);
  if (!parsed || parsed.kind !== SETUP_KIND) return null;
  const row = await findPasswordSetup(sql, `pws_${parsed.ulid}`);
  if (!row || row.used_at !== null || row.expires_at.getTime() <= Date.now()) return null;
  if (!secretMatches(secret, row.secret_hash)) return null;
  if (row.created_by !== null) {
    const issuer = await findUserById(sql, row.created_by);
    if (!issuer || issuer.disabled_at !== null || issuer.deleted_at !== null || issuer.role === 'member')
      return null;
  }
  if (row.created_by_key !== null) {
    const key = await findApiKey(sql, row.created_by_key);
    if (!key || key.revoked_at !== null) return null;
  }
  const user = await findUserById(sql, row.user_id);
  return user && user.disabled_at === null && user.deleted_at === null ? user : null;
}

/**
 * Sets the password through a link, once. Everything the person could act with before ends:
 * sessions, personal tokens, and AI-client grants (whose JWT access tokens die with the grant,
 * as on disabling): whoever held the old password may have made any of them.
 */
export async function setPasswordWithLink(
  sql: Sql,
  secret: string,
  password: string,
): Promise<'set' | 'invalid_link' | 'too_short'> {
  if (password.length < MIN_PASSWORD_LENGTH) return 'too_short';
  const hash = await hashPassword(password);
  return sql.begin(async (tx) => {
    const user = await checkSetupLink(tx, secret);
    const parsed = parseSecret(secret);
    if (!user || !parsed || !(await usePasswordSetup(tx, `pws_${parsed.ulid}`)))
      return 'invalid_link' as const;
    await setPasswordHash(tx, user.id, hash);
    const ended = await endAccess(tx, user.id, 'the password was reset');
    await recordEvent(tx, {
      orgId: user.org_id,
      actor: { kind: 'user', userId: user.id, role: user.role },
      origin: 'user',
      event: 'user.password_set',
      subject: { user_id: user.id, ...ended },
      outcome: 'allowed',
      detail: `${user.email} set a password through a one-time link`,
    });
    return 'set' as const;
  });
}

/**
 * Changes name, role or the disabled flag from the raw change either door sent (PATCH
 * /api/v1/users/:id, the People page's forms), checked here with PersonChange; a role change is
 * audited with the old and the new role.
 */
export async function updatePerson(
  sql: Sql,
  caller: Caller<PeopleActor>,
  userId: string,
  raw: unknown,
): Promise<UserRow> {
  const { orgId, actor } = caller;
  const input = parseInput(PersonChange, raw);
  return sql.begin(async (tx) => {
    let user = await person(tx, orgId, userId);
    mayManage(actor, [user.role, ...(input.role ? [input.role] : [])]);
    if (input.role !== undefined && input.role !== user.role) {
      notSelf(actor, user.id, 'change the role of');
      if (user.service_account && input.role === 'super_admin')
        throw validationFailed([{ path: 'role', message: 'a service account is never a super admin' }]);
      if (input.role !== 'super_admin') await keepASuperAdmin(tx, orgId, user);
      const from = user.role;
      user = await updateUser(tx, user.id, { role: input.role });
      await audit(
        tx,
        caller,
        'user.role_changed',
        { user_id: user.id, from, to: user.role },
        `${user.email}: ${from} → ${user.role}`,
      );
    }
    if (input.name !== undefined && input.name !== user.name)
      user = await updateUser(tx, user.id, { name: input.name });
    if (input.disabled === true && user.disabled_at === null) {
      notSelf(actor, user.id, 'disable');
      await keepASuperAdmin(tx, orgId, user);
      const ended = await endAccessAndLinks(tx, user.id, 'the person was disabled');
      await setUserDisabled(tx, user.id, true);
      await audit(tx, caller, 'user.disabled', { user_id: user.id, ...ended }, `disabled ${user.email}`);
    } else if (input.disabled === false && user.disabled_at !== null) {
      await setUserDisabled(tx, user.id, false);
      await audit(tx, caller, 'user.enabled', { user_id: user.id }, `enabled ${user.email}`);
    }
    return (await findUserById(tx, user.id))!;
  });
}

/** Deletes a person: their access ends and they never sign in again; the history naming them stays. */
export async function deletePerson(sql: Sql, caller: Caller<PeopleActor>, userId: string): Promise<UserRow> {
  const { orgId, actor } = caller;
  return sql.begin(async (tx) => {
    const user = await person(tx, orgId, userId);
    mayManage(actor, [user.role]);
    notSelf(actor, user.id, 'delete');
    await keepASuperAdmin(tx, orgId, user);
    const ended = await endAccessAndLinks(tx, user.id, 'the person was deleted');
    await markUserDeleted(tx, user.id);
    await audit(
      tx,
      caller,
      'user.deleted',
      { user_id: user.id, email: user.email, ...ended },
      `deleted ${user.email}`,
    );
    return user;
  });
}

/** Ends every credential of a person: sessions, personal tokens, AI-client grants. */
async function endAccess(tx: Tx, userId: string, reason: string) {
  return {
    sessions_ended: await revokeOtherSessions(tx, userId, null),
    tokens_revoked: await revokeAllPersonalTokens(tx, userId),
    ai_grants_revoked: await revokeAllUserGrants(tx, userId, reason),
    // A key dies with its owner: enabling the owner again does not bring it back.
    api_keys_revoked: await revokeOwnedApiKeys(tx, userId),
  };
}

/**
 * Ends everything a person leaving (disabled or deleted) could still act with: their credentials,
 * unused password links for them (enabling them again brings none back), and the unused links
 * they issued — an invitation or reset carries its issuer's authority, which ends here.
 */
async function endAccessAndLinks(tx: Tx, userId: string, reason: string) {
  return { ...(await endAccess(tx, userId, reason)), links_spent: await spendPasswordSetups(tx, userId) };
}
