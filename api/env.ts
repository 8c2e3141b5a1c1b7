import type { PersonActor } from '../audit/actors.ts';
import type { Principal } from '../identity/principal.ts';

/** Hono environment of the app: what middleware puts on the context for handlers. */
export interface AppEnv {
  Variables: {
    principal: Principal;
    /**
     * Who acts, for governance and audit: the principal, or the user an organization key acts
     * for (`x-act-as-user`), resolved once by the authentication middleware.
     */
    actor: PersonActor;
    /** The session's CSRF token when the request came with a session cookie. */
    csrfToken: string | null;
    requestId: string;
    /** The session cookie's name for this deployment (`__Host-cs_session` under https). */
    sessionCookie: string;
    /**
     * Set by routes that only run, review or follow queries (api/middleware/access-settled.ts
     * queryOnly): their answers need not wait for the access caches.
     */
    accessUnchanged?: boolean;
  };
}
