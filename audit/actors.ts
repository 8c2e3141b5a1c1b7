// Who is asking, in one shape for every domain: the actor (a person, possibly through an AI
// client, an API key or a workflow run), where the request came from, and the organization. It
// lives in audit/ because every event records it, and every domain below api/ takes it.
import type { Role } from '../store/users.ts';

/** An organization's limits on one AI client (governance/ai-clients.ts). */
export interface AiClientLimits {
  disabled: boolean;
  /** null: no limit beyond its person. */
  databaseIds: string[] | null;
}

/** Where a query comes from (DESIGN.md pipeline; audited and governed by origin). */
export type QueryOrigin = 'user' | 'dashboard' | 'workflow' | 'ai';

/** Who a query runs for. */
export type QueryActor =
  | {
      kind: 'user';
      userId: string;
      role: Role;
      /** The AI client acting for the person; `limits` when already read (MCP reads them with the grant). */
      oauthClient?: { id: string; name: string; limits?: AiClientLimits };
      /** The API key the request came with: the user's own key, or one acting for them. */
      viaApiKeyId?: string;
      /**
       * With x-act-as-user: the owner of the key acting for this user, audited beside them. Such
       * an actor never approves, rejects, comments on or bypasses a review.
       */
      actingKeyOwnerId?: string;
      /** A service account (through its key): it never reviews. */
      serviceAccount?: true;
      /** A workflow run this person started, whose query step this is (audited beside them). */
      workflowRun?: { runId: string; workflowId: string };
    }
  | { kind: 'api_key'; apiKeyId: string }
  | { kind: 'workflow_run'; runId: string; workflowId: string };

/** A person, possibly through an AI client, an API key or a workflow run they started. */
export type PersonActor = Extract<QueryActor, { kind: 'user' }>;

/**
 * The caller of a domain function: which organization, who, and through which door. Entry points
 * (api/rest, api/web, api/mcp, activities) build it once from the authenticated request. A
 * function only some actors may call names their kind (`A`), e.g. an AI client's person.
 */
export interface Caller<A extends QueryActor = QueryActor> {
  orgId: string;
  actor: A;
  origin: QueryOrigin;
}

/** A person's caller from an authenticated request (REST or a page): origin 'user'. */
export function userCaller(orgId: string, actor: QueryActor): Caller {
  return { orgId, actor, origin: 'user' };
}

/** The person behind an actor, when there is one (a key acting for someone is that someone). */
export function actorUserId(actor: QueryActor): string | null {
  return actor.kind === 'user' ? actor.userId : null;
}

/**
 * Admins and super admins, and the organization's own key (a person's key is its owner, so its
 * actor carries the owner's role). A workflow run never administers.
 */
export function actorIsAdmin(actor: QueryActor): boolean {
  if (actor.kind === 'api_key') return true;
  return actor.kind === 'user' && (actor.role === 'admin' || actor.role === 'super_admin');
}
