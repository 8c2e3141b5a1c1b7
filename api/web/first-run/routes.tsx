// The first-run checklist (workspace/first-run.ts) on the landing page: admins of an organization
// still being set up see it above their dashboards until every step is done or they hide it.
import { Hono, type MiddlewareHandler } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { checklistShown, dismissChecklist, firstRunChecklist } from '../../../workspace/first-run.ts';
import { attempt, type PageContext, type PageEnv, redirectWith } from '../kit/page-context.tsx';
import { Checklist } from './view.tsx';

const person = (c: PageContext) => {
  const p = c.get('principal');
  return { orgId: p.orgId, userId: p.userId, role: p.role };
};

/** Puts the checklist above the page (kit/page-context.tsx `banner`) when this person gets it. */
export function firstRunBanner(deps: Deps): MiddlewareHandler<PageEnv> {
  return async function showFirstRun(c, next) {
    if (c.req.method === 'GET') {
      const list = await firstRunChecklist(deps.sql, person(c));
      if (checklistShown(list)) c.set('banner', <Checklist list={list} csrf={c.get('csrfToken')} />);
    }
    await next();
  };
}

export function firstRunPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  app.post('/first-run/dismiss', async (c) => {
    const out = await attempt(() => dismissChecklist(deps.sql, person(c)));
    if (!out.ok) return redirectWith(c, '/dashboards', 'error', out.error.detail);
    return redirectWith(
      c,
      '/dashboards',
      'notice',
      'The checklist is hidden. Its pages stay in the navigation.',
    );
  });
  return app;
}
