// The audit log page (admins): filters over the hash-chained log and its export.
import { Hono } from 'hono';
import { isEventType } from '../../../audit/event-types.ts';
import { verifyAuditChain } from '../../../audit/events.ts';
import type { Deps } from '../../../core/deps.ts';
import { mayReadAudit, searchAuditLog } from '../../../governance/audit-access.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { type PageEnv, pageCaller, render } from '../kit/page-context.tsx';
import { type AuditFilters, AuditPage } from './view.tsx';

const AUDIT_PAGE = 100;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function auditPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();

  app.get('/audit', async (c) => {
    const p = c.get('principal');
    // The same rule as GET /api/v1/audit (governance/audit-access.ts).
    if (!mayReadAudit(pageCaller(c)))
      return render(c, null, 'Not allowed', <p class="error">The audit log is for admins.</p>, 403);
    const q = c.req.query();
    const filters: AuditFilters = {
      person: q.person ?? '',
      database: q.database ?? '',
      outcome: ['allowed', 'pending', 'denied', 'failed'].includes(q.outcome ?? '') ? (q.outcome ?? '') : '',
      aiOnly: q.ai === '1',
      bypassedOnly: q.bypassed === '1',
      text: (q.q ?? '').trim().slice(0, 200),
      type: q.type === 'query' || isEventType(q.type ?? '') ? (q.type ?? '') : '',
      from: DAY.test(q.from ?? '') ? (q.from ?? '') : '',
      to: DAY.test(q.to ?? '') ? (q.to ?? '') : '',
    };
    const cursor = /^\d+$/.test(q.cursor ?? '') ? q.cursor : undefined;
    const [page, users, dbs] = await Promise.all([
      searchAuditLog(
        deps.sql,
        pageCaller(c),
        {
          actor: filters.person || undefined,
          databaseId: filters.database || undefined,
          outcome: (filters.outcome || undefined) as 'allowed' | 'pending' | 'denied' | 'failed' | undefined,
          origin: filters.aiOnly ? 'ai' : undefined,
          bypassedOnly: filters.bypassedOnly,
          text: filters.text || undefined,
          event: filters.type || undefined,
          // Days in UTC, both ends included.
          from: filters.from ? new Date(`${filters.from}T00:00:00Z`) : undefined,
          to: filters.to ? new Date(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000 - 1) : undefined,
        },
        { cursor, limit: AUDIT_PAGE },
      ),
      listPeople(deps.sql, pageCaller(c)),
      listDatabases(deps.sql, pageCaller(c), { limit: 500 }),
    ]);
    // Verify chain: recomputes every hash of the organization's chain (audit/events.ts).
    const chain = q.verify === '1' ? await verifyAuditChain(deps.sql, p.orgId) : null;
    return render(
      c,
      'audit',
      'Audit log',
      <AuditPage
        entries={page.items}
        filters={filters}
        people={users.map((u) => ({ id: u.id, email: u.email }))}
        databases={dbs.items.map(({ db }) => ({ id: db.id, name: db.name }))}
        nextCursor={page.nextCursor}
        chain={chain}
      />,
    );
  });

  return app;
}
