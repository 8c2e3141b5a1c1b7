import type { Caller, PersonActor, QueryOrigin } from '../audit/actors.ts';
import type { Role } from '../store/users.ts';

/**
 * Who is calling. Every request is authenticated to exactly one person or service account:
 * an API key is never a principal of its own, it carries its owner's identity (never more).
 */
export type Principal = UserPrincipal;

/**
 * A person or service account, through a personal access token, a web session, an OAuth access
 * token (MCP) or an API key (`x-api-key`, acting as its owner, or with `x-act-as-user` as the
 * person it names).
 */
export interface UserPrincipal {
  kind: 'user';
  orgId: string;
  userId: string;
  email: string;
  role: Role;
  /** 'api_key': the request came with an API key (credentialId is the key). */
  via: 'token' | 'session' | 'oauth' | 'api_key';
  /** The personal token, session, OAuth grant or API key the request came with. */
  credentialId: string;
  /** A service account: a key's owner that is not a person. */
  serviceAccount?: boolean;
  /**
   * Set when a key acts for this person (x-act-as-user): the key and the key's owner, audited
   * beside the person. Such a request may never approve, reject, comment as reviewer or bypass.
   */
  actedBy?: { apiKeyId: string; ownerUserId: string };
}

export function isAdmin(p: Principal): boolean {
  return p.role === 'admin' || p.role === 'super_admin';
}

/** A person present in the request: not a key (owned or acting), not a service account. */
export function isPersonInPerson(p: Principal): boolean {
  return p.via !== 'api_key' && !p.serviceAccount;
}

/**
 * The principal as a domain function's caller (audit/actors.ts): the person, with the key they
 * came with or that acts for them (x-act-as-user), as api/middleware/auth.ts resolves the actor.
 */
export function principalCaller(p: Principal, origin: QueryOrigin = 'user'): Caller<PersonActor> {
  const actor: PersonActor = {
    kind: 'user',
    userId: p.userId,
    role: p.role,
    ...(p.via === 'api_key' ? { viaApiKeyId: p.credentialId } : {}),
    ...(p.actedBy ? { actingKeyOwnerId: p.actedBy.ownerUserId } : {}),
    ...(p.serviceAccount ? { serviceAccount: true as const } : {}),
  };
  return { orgId: p.orgId, actor, origin };
}
