import { type Context, Hono } from 'hono';
import * as v from 'valibot';
import type { Caller } from '../../audit/actors.ts';
import { verifyAuditChain } from '../../audit/events.ts';
import { CSV_COLUMNS, csvLine, csvRow, presentEntry } from '../../audit/export.ts';
import type { Deps } from '../../core/deps.ts';
import { exportAuditLog, searchAuditLog } from '../../governance/audit-access.ts';
import type { AuditFilter } from '../../store/audit.ts';
import type { AppEnv } from '../env.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { doc } from '../openapi.ts';
import { parseWith } from '../validate.ts';

const isoTime = v.pipe(
  v.string(),
  v.isoTimestamp('must be an ISO 8601 timestamp'),
  v.transform((s) => new Date(s)),
);

const Filter = v.object({
  actor: v.optional(v.pipe(v.string(), v.minLength(1))),
  origin: v.optional(v.picklist(['user', 'dashboard', 'workflow', 'ai'])),
  /** One kind ('query', 'user.role_changed', 'mcp.tool') or a family ending in a dot ('user.'). */
  event: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z_]+(\.[a-z_]+)*\.?$/, 'must be an event name such as user.created or user.'),
    ),
  ),
  database_id: v.optional(v.pipe(v.string(), v.minLength(1))),
  outcome: v.optional(v.picklist(['allowed', 'pending', 'denied', 'failed'])),
  bypassed: v.optional(v.picklist(['true', 'false'])),
  q: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(200))),
  request_id: v.optional(v.pipe(v.string(), v.minLength(1))),
  from: v.optional(isoTime),
  to: v.optional(isoTime),
});
const Search = v.object({
  ...Filter.entries,
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a cursor from next_cursor'))),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1), v.maxValue(500)),
    '100',
  ),
});
const Export = v.object({ ...Filter.entries, format: v.optional(v.picklist(['ndjson', 'csv']), 'ndjson') });

function filterOf(q: v.InferOutput<typeof Filter>): AuditFilter {
  return {
    actor: q.actor,
    origin: q.origin,
    event: q.event,
    databaseId: q.database_id,
    outcome: q.outcome,
    bypassedOnly: q.bypassed === 'true',
    text: q.q || undefined,
    requestId: q.request_id,
    from: q.from,
    to: q.to,
  };
}

/** Who reads the log: errors of failed queries are shown as this person may read them. */
function readerOf(c: Context<AppEnv>): Caller {
  const p = c.get('principal');
  return { orgId: p.orgId, actor: { kind: 'user', userId: p.userId, role: p.role }, origin: 'user' };
}

/** The audit log of the caller's organization: search, export, chain verification. Admins only. */
export function auditRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate(deps.sql, ['api_key', 'token', 'session']), requireAdmin());

  app.get(
    '/',
    doc('Audit log', 'Search the audit log (actor, origin, database, bypassed, time range)', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const q = parseWith(Search, c.req.query());
      const page = await searchAuditLog(deps.sql, readerOf(c), filterOf(q), {
        cursor: q.cursor,
        limit: q.limit,
      });
      return c.json({ data: page.items.map(presentEntry), next_cursor: page.nextCursor });
    },
  );

  app.get(
    '/export',
    doc('Audit log', 'Export the audit log as NDJSON or CSV', { auth: ['apiKey', 'bearer', 'session'] }),
    (c) => {
      const q = parseWith(Export, c.req.query());
      const rows = exportAuditLog(deps.sql, readerOf(c), filterOf(q));
      const encoder = new TextEncoder();
      const csv = q.format === 'csv';
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          if (csv) controller.enqueue(encoder.encode(csvLine(CSV_COLUMNS)));
        },
        async pull(controller) {
          try {
            const next = await rows.next();
            if (next.done) return controller.close();
            controller.enqueue(
              encoder.encode(csv ? csvRow(next.value) : `${JSON.stringify(presentEntry(next.value))}\n`),
            );
          } catch (err) {
            deps.logger.error({ err: { message: (err as Error).message } }, 'audit export failed');
            controller.error(err);
          }
        },
        async cancel() {
          await rows.return(undefined);
        },
      });
      const stamp = new Date().toISOString().replaceAll(':', '-');
      return new Response(body, {
        headers: {
          'content-type': csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
          'content-disposition': `attachment; filename="audit-${stamp}.${csv ? 'csv' : 'ndjson'}"`,
          'cache-control': 'no-store',
        },
      });
    },
  );

  app.get(
    '/verify',
    doc('Audit log', 'Verify the audit hash chain of the organization', {
      auth: ['apiKey', 'bearer', 'session'],
    }),
    async (c) => {
      const report = await verifyAuditChain(deps.sql, c.get('principal').orgId);
      return c.json({ ok: report.ok, entries: report.entries, broken: report.broken });
    },
  );
  return app;
}
