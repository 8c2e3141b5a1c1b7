import type { Context } from 'hono';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { Deps } from '../../core/deps.ts';
import type { HistoryRow, SavedQueryRow } from '../../store/workspace.ts';
import { historyEntry, queryHistory } from '../../workspace/history.ts';
import {
  editSavedQuery,
  type Person,
  removeSavedQuery,
  SavedQueryChange,
  SavedQueryInput,
  savedQueries,
  savedQuery,
  saveQuery,
} from '../../workspace/saved-queries.ts';
import { personSchema } from '../../workspace/schema.ts';
import type { AppEnv } from '../env.ts';
import { forbidden } from '../errors.ts';
import { authenticate } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { jsonBody, parseWith } from '../validate.ts';

// The domain's schemas (workspace/saved-queries.ts): the console's save form answers the same errors.
const CreateSaved = SavedQueryInput;
const UpdateSaved = SavedQueryChange;
const HistoryQuery = v.object({ q: v.optional(v.pipe(v.string(), v.maxLength(200))) });
const SchemaQuery = v.object({
  credential_id: v.optional(v.pipe(v.string(), v.regex(/^crd_[0-9A-Z]{26}$/, 'must be a credential id'))),
});

/** The person a request acts for: saved queries and history belong to people, not to keys alone. */
function person(c: Context<AppEnv>): Person {
  const a = c.get('actor');
  if (a.kind !== 'user') throw forbidden('saved queries and history belong to a person');
  return { orgId: c.get('principal').orgId, userId: a.userId, role: a.role };
}

/**
 * The query console's API: the governed schema of a database (as the caller may see it, protected
 * columns marked), the caller's history, and saved queries (personal or shared, by name).
 */
export function workspaceRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Per route rather than `use('*')`: this router is mounted at /api/v1 beside the others.
  const auth = authenticate(deps.sql, ['api_key', 'token', 'session']);
  const any = { auth: ['apiKey', 'bearer', 'session'] as Array<'apiKey' | 'bearer' | 'session'> };

  app.get(
    '/desk/databases/:id/schema',
    doc(
      'Databases',
      'Tables and columns of a database as the caller may use them, protected columns marked',
      any,
    ),
    auth,
    async (c) => {
      const q = parseWith(SchemaQuery, c.req.query());
      c.header('cache-control', 'no-store');
      return c.json(
        await personSchema(deps, {
          orgId: c.get('principal').orgId,
          actor: c.get('actor'),
          databaseId: c.req.param('id'),
          credentialId: q.credential_id,
        }),
      );
    },
  );

  app.get(
    '/query-history',
    doc('Workspace', 'The caller’s recent statements (last 100)', any),
    auth,
    async (c) => {
      const q = parseWith(HistoryQuery, c.req.query());
      return c.json({ data: (await queryHistory(deps.sql, person(c), q.q ?? null)).map(presentHistory) });
    },
  );
  app.get('/query-history/:id', doc('Workspace', 'One history entry', any), auth, async (c) =>
    c.json(presentHistory(await historyEntry(deps.sql, person(c), c.req.param('id')))),
  );

  app.get(
    '/saved-queries',
    doc('Workspace', 'The caller’s saved queries and shared ones', any),
    auth,
    async (c) => c.json({ data: (await savedQueries(deps.sql, person(c))).map(presentSaved) }),
  );
  app.post(
    '/saved-queries',
    doc('Workspace', 'Save a query (shared: every person of the organization sees it)', {
      ...any,
      body: CreateSaved,
      status: 201,
    }),
    auth,
    async (c) => {
      const body = await jsonBody(c, CreateSaved);
      return c.json(presentSaved(await saveQuery(deps.sql, person(c), body)), 201);
    },
  );
  app.get('/saved-queries/:id', doc('Workspace', 'One saved query', any), auth, async (c) =>
    c.json(presentSaved(await savedQuery(deps.sql, person(c), c.req.param('id')))),
  );
  app.patch(
    '/saved-queries/:id',
    doc('Workspace', 'Rename, edit or share a saved query (its owner only)', { ...any, body: UpdateSaved }),
    auth,
    async (c) => {
      const body = await jsonBody(c, UpdateSaved);
      return c.json(presentSaved(await editSavedQuery(deps.sql, person(c), c.req.param('id'), body)));
    },
  );
  app.delete(
    '/saved-queries/:id',
    doc('Workspace', 'Delete a saved query (its owner, or an admin)', { ...any, status: 204 }),
    auth,
    async (c) => {
      await removeSavedQuery(deps.sql, person(c), c.req.param('id'));
      return c.body(null, 204);
    },
  );
  return app;
}

function presentHistory(h: HistoryRow) {
  return {
    id: h.id,
    database_id: h.database_id,
    credential_id: h.credential_id,
    statement: h.statement,
    outcome: h.outcome,
    rows: h.rows_count,
    duration_ms: h.duration_ms,
    ran_at: h.ran_at.toISOString(),
  };
}

function presentSaved(s: SavedQueryRow) {
  return {
    id: s.id,
    name: s.name,
    statement: s.statement,
    database_id: s.database_id,
    shared: s.shared,
    owner: { user_id: s.owner_id, email: s.owner_email ?? null },
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}
