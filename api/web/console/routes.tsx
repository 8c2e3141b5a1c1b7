// The query console: pick a database and credential, run SQL through the governed pipeline; the
// person's history and saved queries beside it.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { type ConsoleRun, runInConsole } from '../../../workspace/console.ts';
import { type HistoryListing, historyEntry, historyLines } from '../../../workspace/history.ts';
import {
  type Person,
  removeSavedQuery,
  savedQueries,
  savedQuery,
  saveQuery,
} from '../../../workspace/saved-queries.ts';
import { queryOnly } from '../../middleware/access-settled.ts';
import { attempt, type PageEnv, pageCaller, redirectWith, render } from '../kit/page-context.tsx';
import { ConsolePage } from './view.tsx';

type Ctx = Parameters<typeof render>[0];

export function consolePageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const person = (c: Ctx): Person => {
    const p = c.get('principal');
    return { orgId: p.orgId, userId: p.userId, role: p.role };
  };

  app.get('/console', async (c) => {
    // A history line or a saved query opens in the editor, ready to run again (never run on GET).
    const historyId = c.req.query('history');
    const savedId = c.req.query('saved');
    let statement = '';
    let target = c.req.query('credential') ?? '';
    if (historyId) {
      const h = await attempt(() => historyEntry(deps.sql, person(c), historyId));
      if (h.ok) {
        statement = h.value.statement;
        if (h.value.database_id && h.value.credential_id)
          target = `${h.value.database_id}/${h.value.credential_id}`;
      }
    } else if (savedId) {
      const s = await attempt(() => savedQuery(deps.sql, person(c), savedId));
      if (s.ok) statement = s.value.statement;
    }
    return consolePage(c, target, statement, null);
  });

  // Running a query changes no access (api/middleware/access-settled.ts).
  app.post('/console', queryOnly(), async (c) => {
    const form = c.get('form');
    const target = form.credential ?? '';
    const [databaseId = '', credentialId = ''] = target.split('/');
    const statement = form.statement ?? '';
    // The page's other reads need nothing of the run: they go alongside it, and the run's own
    // statement that adds its history line answers the lines the page lists.
    const lists = otherLists(c);
    const { run, history } = await runInConsole(
      deps,
      person(c),
      { databaseId, credentialId, statement, justification: form.justification || null },
      historyListing(c),
    );
    // With the editor, a selection ran alone: the page shows the whole text again.
    return consolePage(c, target, form.editor_text || statement, run, lists, history);
  });

  app.post('/console/saved', async (c) => {
    const form = c.get('form');
    const [databaseId = ''] = (form.credential ?? '').split('/');
    // Checked by saveQuery with the schema POST /api/v1/saved-queries uses (workspace/saved-queries.ts).
    const saved = await attempt(() =>
      saveQuery(deps.sql, person(c), {
        name: form.name ?? '',
        statement: form.statement ?? '',
        database_id: databaseId || null,
        shared: form.shared === '1',
      }),
    );
    if (!saved.ok) return redirectWith(c, '/console', 'error', saved.error.detail);
    return redirectWith(
      c,
      `/console?saved=${saved.value.id}`,
      'notice',
      `Saved “${saved.value.name}”${saved.value.shared ? ', shared with your organization' : ''}.`,
    );
  });

  app.post('/console/saved/:id/delete', async (c) => {
    const gone = await attempt(() => removeSavedQuery(deps.sql, person(c), c.req.param('id')));
    return gone.ok
      ? redirectWith(c, '/console', 'notice', 'Saved query deleted.')
      : redirectWith(c, '/console', 'error', gone.error.detail);
  });

  /** The search over the history, and whether the whole history is listed (its "Show the whole history"). */
  const historyListing = (c: Ctx) => ({
    search: (c.req.query('q') ?? '').slice(0, 200) || null,
    all: c.req.query('all_history') === '1',
  });

  /** The databases and saved queries the page lists, read at once; a failure waits for the page. */
  function otherLists(c: Ctx) {
    const lists = Promise.all([
      listDatabases(deps.sql, pageCaller(c), { limit: 200 }),
      savedQueries(deps.sql, person(c)),
    ]);
    lists.catch(() => {});
    return lists;
  }

  async function consolePage(
    c: Ctx,
    target: string,
    statement: string,
    outcome: ConsoleRun | null,
    lists = otherLists(c),
    listed: HistoryListing | null = null,
  ) {
    const p = c.get('principal');
    const { search, all } = historyListing(c);
    const [[dbs, saved], history] = await Promise.all([
      lists,
      listed ?? historyLines(deps.sql, person(c), search, all),
    ]);
    return render(
      c,
      'console',
      'Query console',
      <ConsolePage
        databases={dbs.items}
        csrf={c.get('csrfToken')}
        target={target}
        statement={statement}
        outcome={outcome}
        history={history.lines}
        moreHistory={history.more}
        historySearch={c.req.query('q') ?? ''}
        saved={saved}
        userId={p.userId}
        isAdmin={p.role !== 'member'}
        notice={c.req.query('notice')}
        error={c.req.query('error')}
      />,
    );
  }
  return app;
}
