import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { agentStatuses } from '../../registry/agents.ts';
import { checkConnection } from '../../registry/check-connection.ts';
import {
  CreateDatabase,
  ListDatabases,
  PatchDatabase,
  SetupDatabase,
} from '../../registry/database-input.ts';
import { credentialSettings } from '../../registry/database-rules.ts';
import {
  createDatabase,
  type DatabaseWithCredentials,
  deleteDatabase,
  getDatabase,
  listDatabases,
  patchDatabase,
  removeByApiId,
  setupDatabase,
} from '../../registry/databases.ts';
import type { AgentStatus } from '../../tunnels/agent-status.ts';
import { restCaller } from '../caller.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';

/** SPEC.md 4.2, under /api/v1/desk/databases. Writes need an admin; reads honour restrict_access. */
export function databaseRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']));
  const admin = requireAdmin();
  // The `agent` status object of each database that names one (agent/README.md).
  const present = async (orgId: string, x: DatabaseWithCredentials) => {
    const agents = await agentStatuses(deps.sql, orgId, [x.db.agent_id]);
    return presentDatabase(x, agents);
  };

  app.get(
    '/',
    doc('Databases', 'List databases (filter by group, paginated)', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const q = parseWith(ListDatabases, c.req.query());
      const p = c.get('principal');
      const page = await listDatabases(deps.sql, restCaller(c), q);
      const agents = await agentStatuses(
        deps.sql,
        p.orgId,
        page.items.map((x) => x.db.agent_id),
      );
      return c.json({
        data: page.items.map((x) => presentDatabase(x, agents)),
        next_cursor: page.nextCursor,
      });
    },
  );
  app.post(
    '/',
    doc('Databases', 'Register a database with its credentials', {
      auth: ['apiKey', 'bearer', 'session'],
      body: CreateDatabase,
      status: 201,
    }),
    admin,
    async (c) => {
      const body = await jsonBody(c, CreateDatabase);
      const orgId = c.get('principal').orgId;
      return c.json(await present(orgId, await createDatabase(deps, restCaller(c), body)), 201);
    },
  );
  app.put(
    '/setup',
    doc('Databases', 'Create or update a database by API id', {
      auth: ['apiKey', 'bearer', 'session'],
      body: SetupDatabase,
    }),
    admin,
    async (c) => {
      const body = await jsonBody(c, SetupDatabase);
      const orgId = c.get('principal').orgId;
      return c.json(await present(orgId, await setupDatabase(deps, restCaller(c), body)));
    },
  );
  app.delete(
    '/remove/:api_id',
    doc('Databases', 'Delete a database by API id', { auth: ['apiKey', 'bearer', 'session'] }),
    admin,
    async (c) => {
      return c.json(presentDatabase(await removeByApiId(deps, restCaller(c), c.req.param('api_id'))));
    },
  );
  app.get(
    '/:id/check-connection/:username',
    doc('Databases', 'Check the connection of a credential (plain text: ok, or the message of the server)', {
      auth: ['apiKey', 'bearer', 'session'],
      text: true,
    }),
    async (c) => {
      const answer = await checkConnection(deps, restCaller(c), c.req.param('id'), c.req.param('username'));
      // SPEC.md 7: plain text; a failed connection is still 200 with the server's message.
      return answer === null ? c.text('not found', 404) : c.text(answer, 200);
    },
  );
  app.get(
    '/:id',
    doc('Databases', 'Get a database', { auth: ['apiKey', 'bearer', 'session'] }),
    async (c) => {
      const p = c.get('principal');
      return c.json(await present(p.orgId, await getDatabase(deps.sql, restCaller(c), c.req.param('id'))));
    },
  );
  app.patch(
    '/:id',
    doc('Databases', 'Update a database and its credentials', {
      auth: ['apiKey', 'bearer', 'session'],
      body: PatchDatabase,
    }),
    admin,
    async (c) => {
      const body = await jsonBody(c, PatchDatabase);
      const p = c.get('principal');
      return c.json(
        await present(p.orgId, await patchDatabase(deps, restCaller(c), c.req.param('id'), body)),
      );
    },
  );
  app.delete(
    '/:id',
    doc('Databases', 'Delete a database, its credentials and grants', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    admin,
    async (c) => {
      return c.json(presentDatabase(await deleteDatabase(deps, restCaller(c), c.req.param('id'))));
    },
  );
  return app;
}

/** SPEC.md 2.2 database object. Passwords and the client key are never part of it. */
export function presentDatabase(
  { db, credentials }: DatabaseWithCredentials,
  agents: ReadonlyMap<string, AgentStatus> = new Map(),
) {
  return {
    id: db.id,
    api_id: db.api_id,
    name: db.name,
    adapter: db.adapter,
    hostname: db.hostname,
    port: db.port,
    database: db.database,
    ssl: db.ssl,
    verify_server_hostname: db.verify_server_hostname,
    ssl_ca_cert_configured: db.ssl_ca_cert !== null,
    ssl_client_cert_configured: db.ssl_client_cert !== null,
    restrict_access: db.restrict_access,
    review_bypass_allowed: db.review_bypass_allowed,
    group: db.group_name,
    slack_channel: db.slack_channel,
    agent_id: db.agent_id,
    /** Status of the agent named by agent_id (connected, last seen, version); null without one. */
    agent: db.agent_id ? (agents.get(db.agent_id) ?? null) : null,
    ai_enabled: db.ai_enabled,
    ai_max_rows: db.ai_max_rows,
    credentials: credentials.map((c) => ({ id: c.id, ...credentialSettings(c) })),
    inserted_at: db.inserted_at.toISOString(),
    updated_at: db.updated_at.toISOString(),
  };
}
