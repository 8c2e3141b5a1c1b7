// The home page. Admins of an organization still being set up get the first-run checklist
// (workspace/first-run.ts); everyone else, and admins who finished or dismissed it, go to the
// dashboards as before.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { checklistShown, dismissChecklist, firstRunChecklist } from '../../../workspace/first-run.ts';
import { attempt, type PageContext, type PageEnv, redirectWith, render } from '../kit/page-context.tsx';
import { HomePage } from './view.tsx';

const person = (c: PageContext) => {
  const p = c.get('principal');
  return { orgId: p.orgId, userId: p.userId, role: p.role };
};

export function homePageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();

  app.get('/', async (c) => {
    const list = await firstRunChecklist(deps.sql, person(c));
    if (!checklistShown(list)) return c.redirect('/dashboards', 302);
    return render(
      c,
      null,
      'Get started',
      <HomePage list={list} csrf={c.get('csrfToken')} error={c.req.query('error')} />,
    );
  });

  app.post('/first-run/dismiss', async (c) => {
    const out = await attempt(() => dismissChecklist(deps.sql, person(c)));
    if (!out.ok) return redirectWith(c, '/', 'error', out.error.detail);
    return redirectWith(
      c,
      '/dashboards',
      'notice',
      'The checklist is hidden. The same pages stay in the navigation.',
    );
  });
  return app;
}
