import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { disconnectClient, listConnectedClients } from '../../identity/oauth-grants.ts';
import type { ConnectedClient } from '../../store/oauth.ts';
import type { AppEnv } from '../env.ts';
import { ErrorCard, formCsrfOk, page, pageSession } from './pages.tsx';

/** GET /oauth/connections: the user's connected AI clients; POST …/:id/revoke disconnects one. */
export function connectionRoutes(deps: Pick<Deps, 'sql'>): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/oauth/connections', async (c) => {
    const session = await pageSession(c, deps.sql);
    if (!session) return c.redirect(`/login?next=${encodeURIComponent('/oauth/connections')}`, 302);
    const clients = await listConnectedClients(deps.sql, session.principal.userId);
    return page(c, 'Connected AI clients', <Connections clients={clients} csrf={session.csrfToken} />);
  });

  app.post('/oauth/connections/:grantId/revoke', async (c) => {
    const session = await pageSession(c, deps.sql);
    const form = await c.req.parseBody();
    if (!session || !formCsrfOk(form, session.csrfToken)) {
      return page(
        c,
        'Not allowed',
        <ErrorCard title="Not allowed" message="This form expired or did not come from Countersign." />,
        403,
        false,
      );
    }
    await disconnectClient(deps.sql, session.principal.userId, c.req.param('grantId'));
    return c.redirect('/oauth/connections', 303);
  });
  return app;
}

function Connections(props: { clients: ConnectedClient[]; csrf: string }) {
  return (
    <section>
      <h1>Connected AI clients</h1>
      {props.clients.length === 0 ? <p>No AI client is connected to your account.</p> : null}
      <ul class="connections">
        {props.clients.map((client) => (
          <li>
            <strong>{client.client_name}</strong>
            {/* A metadata-document client is named with the host that publishes its document. */}
            {client.kind === 'cimd' ? <span class="muted"> ({new URL(client.client_id).host})</span> : null} —
            connected {client.created_at.toISOString().slice(0, 16).replace('T', ' ')} UTC
            {client.last_used_at
              ? `, last used ${client.last_used_at.toISOString().slice(0, 16).replace('T', ' ')} UTC`
              : ', not used yet'}
            <form method="post" action={`/oauth/connections/${client.grant_id}/revoke`} class="inline">
              <input type="hidden" name="csrf" value={props.csrf} />
              <button type="submit">Disconnect</button>
            </form>
          </li>
        ))}
      </ul>
    </section>
  );
}
