// The audit log page (admins): filters over the hash-chained log and its export.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { mayReadAudit, searchAuditLog } from '../../../governance/audit-access.ts';
import { listPeople } from '../../../identity/directory.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { type PageEnv, pageActor, pageCaller, render } from '../kit/page-context.tsx';
import { type AuditFilters, AuditPage } from './view.tsx';

const AUDIT_PAGE = 100;

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
        },
        { cursor, limit: AUDIT_PAGE },
      ),
      listPeople(deps.sql, pageCaller(c)),
      listDatabases(deps.sql, p.orgId, pageActor(c), { limit: 500 }),
    ]);
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
      />,
    );
  });

  return app;
}
