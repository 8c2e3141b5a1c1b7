// The query console: pick a database and credential, run SQL through the governed pipeline.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { type GovernanceDeps, runGovernedQuery } from '../../../governance/query.ts';
import { listDatabases } from '../../../registry/databases.ts';
import { attempt, type PageEnv, pageActor, render } from '../kit/page-context.tsx';
import { type ConsoleOutcome, ConsolePage } from './view.tsx';

export function consolePageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const gov: GovernanceDeps = deps;
  app.get('/console', async (c) => consolePage(c, '', '', null));
  app.post('/console', async (c) => {
    const p = c.get('principal');
    const form = c.get('form');
    const [databaseId = '', credentialId = ''] = (form.credential ?? '').split('/');
    const statement = form.statement ?? '';
    const ran = await attempt(() =>
      runGovernedQuery(gov, {
        orgId: p.orgId,
        actor: pageActor(c),
        origin: 'user',
        databaseId,
        credentialId,
        statement,
        params: [],
        onReviewRequired: 'submit',
        justification: form.justification ?? null,
      }),
    );
    const outcome: ConsoleOutcome = !ran.ok
      ? { status: 'error', message: ran.error.detail }
      : ran.value.status === 'executed'
        ? { status: 'executed', result: ran.value.result }
        : {
            status: 'pending_review',
            requestId: ran.value.requestId,
            reviewsRequired: ran.value.reviewsRequired,
          };
    return consolePage(c, credentialId, statement, outcome);
  });

  async function consolePage(
    c: Parameters<typeof render>[0],
    credentialId: string,
    statement: string,
    outcome: ConsoleOutcome | null,
  ) {
    const p = c.get('principal');
    const dbs = await listDatabases(deps.sql, p.orgId, pageActor(c), { limit: 200 });
    return render(
      c,
      'console',
      'Query console',
      <ConsolePage
        databases={dbs.items}
        csrf={c.get('csrfToken')}
        credentialId={credentialId}
        statement={statement}
        outcome={outcome}
      />,
    );
  }
  return app;
}
