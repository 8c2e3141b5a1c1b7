// Which account an SSO sign-in reaches. An identity provider can assert any email, and whoever
// configures the organization's provider chooses what it asserts; so an email alone never hands
// over an account that exists already. A sign-in reaches an existing account through a link
// (organization, issuer, subject) made when SSO created the account, when the person confirmed
// with their password, or when the provider marked the email verified (OIDC Core §5.1
// email_verified) and the email is in one of the organization's own domains.
import { recordEvent } from '../audit/events.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Sql } from '../store/db.ts';
import { findSsoConfig, findSsoLink, insertSsoLink, type SsoConfigRow } from '../store/sso.ts';
import { findUserByEmail, findUserById, type UserRow } from '../store/users.ts';
import { createUser } from './manage.ts';

const LINK_CONTEXT = 'sso-link';
const LINK_SECONDS = 600;

/** Why an SSO sign-in failed, written for the person at the browser (never a secret). */
export class SsoError extends Error {
  constructor(
    readonly userMessage: string,
    readonly reason: string = userMessage,
  ) {
    super(userMessage);
    this.name = 'SsoError';
  }
}

/** An existing account SSO may not take over yet: its owner must confirm with their password. */
export class SsoLinkRequired extends SsoError {
  constructor(readonly pending: PendingLink) {
    super(
      'An account with this email address already exists here, and single sign-on has not been linked to it. ' +
        'Sign in with its password once, in this browser, to link them; after that single sign-on signs you in.',
      'existing account not linked',
    );
    this.name = 'SsoLinkRequired';
  }
}

interface PendingLink {
  orgId: string;
  issuer: string;
  subject: string;
  userId: string;
  exp: number;
}

/** The user a validated SSO sign-in is for: linked, linked now, provisioned, or refused. */
export async function ssoAccount(
  sql: Sql,
  cfg: SsoConfigRow,
  claims: Record<string, unknown>,
): Promise<string> {
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  if (!subject) throw new SsoError('The identity provider did not say who you are.', 'no sub claim');
  const linked = await findSsoLink(sql, cfg.org_id, cfg.issuer, subject);
  const linkedUser = linked ? await findUserById(sql, linked) : null;
  if (linkedUser && linkedUser.deleted_at === null) return usable(linkedUser);

  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email || claims.email_verified !== true) {
    throw new SsoError('Your identity provider did not confirm your email address.', 'no verified email');
  }
  // Only this organization's people: an address is unique per organization, and an account of
  // another organization with the same address is another person's account to this provider.
  const user = await findUserByEmail(sql, cfg.org_id, email);
  const link = { orgId: cfg.org_id, issuer: cfg.issuer, subject };
  if (user) {
    usable(user);
    if (!inDomains(email, cfg.domains))
      throw new SsoLinkRequired({ ...link, userId: user.id, exp: Date.now() + LINK_SECONDS * 1000 });
    await linkAccount(
      sql,
      { ...link, userId: user.id },
      'the email is verified and in an organization domain',
    );
    return user.id;
  }
  const role = mappedRole(cfg, claims) ?? cfg.provision_role;
  if (!role)
    throw new SsoError('You do not have an account here yet; ask an administrator.', 'not provisioned');
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : '';
  return sql.begin(async (tx) => {
    const created = await createUser(tx, { orgId: cfg.org_id, email, name, role, password: null });
    await insertSsoLink(tx, { ...link, userId: created.id });
    return created.id;
  });
}

function usable(user: UserRow): string {
  if (user.disabled_at !== null || user.deleted_at !== null)
    throw new SsoError('This account is disabled.', 'user disabled');
  return user.id;
}

/** Exactly one of the domains after the last `@` (a subdomain is another owner's). */
export function inDomains(email: string, domains: string[]): boolean {
  const host = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return host !== '' && domains.some((d) => d.toLowerCase() === host);
}

async function linkAccount(
  sql: Sql,
  link: { orgId: string; issuer: string; subject: string; userId: string },
  why: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    await insertSsoLink(tx, link);
    const user = await findUserById(tx, link.userId);
    await recordEvent(tx, {
      orgId: link.orgId,
      actor: { kind: 'user', userId: link.userId, role: user!.role },
      origin: 'user',
      event: 'user.sso_linked',
      subject: { user_id: link.userId, issuer: link.issuer, sso_subject: link.subject },
      outcome: 'allowed',
      detail: `single sign-on linked to ${user!.email}: ${why}`,
    });
  });
}

/**
 * The cookie carrying an SSO identity that waits for its account's password. Under https it is
 * `__Host-` bound, so a sibling subdomain cannot plant its own identity in a victim's browser
 * for the victim's password to link (RFC 6265bis §4.1.3.2).
 */
export function ssoLinkCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https://') ? '__Host-cs_sso_link' : 'cs_sso_link';
}

/** The sealed cookie value that carries a link awaiting the person's password. */
export function sealPendingLink(keyring: Keyring, pending: PendingLink): string {
  return keyring.encrypt(JSON.stringify(pending), LINK_CONTEXT);
}

/**
 * After a password sign-in: links the SSO identity the same browser brought, when it was for
 * this very person, is fresh, and the organization still uses that provider. Anything else is
 * dropped silently: the password sign-in itself has succeeded either way.
 */
export async function confirmPendingLink(
  deps: { sql: Sql; keyring: Keyring },
  sealed: string | undefined,
  user: UserRow,
): Promise<boolean> {
  if (!sealed) return false;
  let pending: PendingLink;
  try {
    pending = JSON.parse(deps.keyring.decrypt(sealed, LINK_CONTEXT)) as PendingLink;
  } catch {
    return false;
  }
  if (pending.userId !== user.id || pending.orgId !== user.org_id || pending.exp < Date.now()) return false;
  const cfg = await findSsoConfig(deps.sql, pending.orgId);
  if (!cfg?.enabled || cfg.issuer !== pending.issuer) return false;
  await linkAccount(deps.sql, pending, 'the person confirmed with their password');
  return true;
}

/**
 * The role a new account gets from the identity provider's claim: the highest role any of the
 * claim's values maps to (a string, or an array such as `groups`); null when none maps. Only
 * account creation uses it — admins change roles later on the People page, and a later sign-in
 * does not undo that.
 */
export function mappedRole(
  cfg: Pick<SsoConfigRow, 'role_claim' | 'role_map'>,
  claims: Record<string, unknown>,
): 'admin' | 'member' | null {
  if (!cfg.role_claim) return null;
  const raw = claims[cfg.role_claim];
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string');
  const roles = values.map((v) => cfg.role_map[v]).filter(Boolean);
  return roles.includes('admin') ? 'admin' : roles.includes('member') ? 'member' : null;
}
