// The other doors a person runs a governed query through, for the MCP bench's sequential rounds:
// the REST route (`POST /api/v1/desk/query-requests` with an API key) and the console (the signed-in
// page's form post, answered with the whole page and its result table), each against the compiled
// `serve` the MCP figures use. Both go through the one governed pipeline MCP does.

import { createApiKey } from '../../identity/manage.ts';
import type { Tx } from '../../store/db.ts';
import { signIn } from '../../test/helpers/sign-in.ts';

export interface Door {
  rest(): Promise<void>;
  console(): Promise<void>;
}

export async function doors(
  sql: Tx,
  apiUrl: string,
  who: { orgId: string; userId: string; email: string; password: string },
  target: { databaseId: string; credentialId: string },
  statement: string,
): Promise<Door> {
  const { secret } = await createApiKey(sql, {
    orgId: who.orgId,
    name: 'bench',
    createdBy: who.userId,
    ownerUserId: who.userId,
  });
  const body = JSON.stringify({
    database_id: target.databaseId,
    credential_id: target.credentialId,
    statement,
  });
  const session = await signIn(
    { fetch: (path, init) => fetch(apiUrl + path, init) },
    who.email,
    who.password,
  );
  const form = () =>
    new URLSearchParams({
      _csrf: session.csrf,
      credential: `${target.databaseId}/${target.credentialId}`,
      statement,
    });
  return {
    async rest() {
      const res = await fetch(`${apiUrl}/api/v1/desk/query-requests`, {
        method: 'POST',
        headers: { 'x-api-key': secret, 'content-type': 'application/json' },
        body,
      });
      const out = (await res.json()) as { status?: string };
      if (res.status !== 200 || out.status !== 'executed')
        throw new Error(`REST query answered ${res.status} ${JSON.stringify(out)}`);
    },
    async console() {
      const res = await fetch(`${apiUrl}/console`, {
        method: 'POST',
        headers: { cookie: session.cookie },
        body: form(),
      });
      const page = await res.text();
      // The result table's one row: the run happened and its answer is on the page.
      if (res.status !== 200 || !page.includes('<td')) throw new Error(`console answered ${res.status}`);
    },
  };
}
