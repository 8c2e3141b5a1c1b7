import type { Role } from '../store/users.ts';

/** Who is calling. Every request is authenticated to exactly one principal. */
export type Principal = ApiKeyPrincipal | UserPrincipal;

/** An organization API key (`x-api-key`): acts for the organization, not for a person. */
export interface ApiKeyPrincipal {
  kind: 'api_key';
  orgId: string;
  apiKeyId: string;
}

/** A person, through a personal access token, a web session, or an OAuth access token (MCP). */
export interface UserPrincipal {
  kind: 'user';
  orgId: string;
  userId: string;
  email: string;
  role: Role;
  /** 'api_key': an organization key acting for this person (x-act-as-user; credentialId is the key). */
  via: 'token' | 'session' | 'oauth' | 'api_key';
  /** The personal token, session or OAuth grant the request came with. */
  credentialId: string;
}

export function isAdmin(p: Principal): boolean {
  return p.kind === 'api_key' || p.role === 'admin' || p.role === 'super_admin';
}
