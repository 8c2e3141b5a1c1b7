// The web interface (DESIGN.md: hono/jsx pages served by the API). Every page here needs a
// session; handlers call the same domain functions as the REST routes and draw the answer.
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { aiConnectPageRoutes } from './ai-connect/routes.tsx';
import { auditPageRoutes } from './audit/routes.tsx';
import { confirmationRules } from './confirmations.ts';
import { consolePageRoutes } from './console/routes.tsx';
import { dashboardPageRoutes } from './dashboards/routes.tsx';
import { databasePageRoutes } from './databases/routes.tsx';
import { firstRunBanner, firstRunPageRoutes } from './first-run/routes.tsx';
import { confirmDestructive } from './kit/confirm.tsx';
import { type PageEnv, pageSession } from './kit/page-context.tsx';
import { organizationPageRoutes } from './organization/routes.tsx';
import { peoplePageRoutes } from './people/routes.tsx';
import { reviewPageRoutes } from './reviews/routes.tsx';
import { runPageRoutes } from './runs/routes.tsx';
import { settingsPageRoutes } from './settings/routes.tsx';
import { workflowPageRoutes } from './workflows/routes.tsx';

/** GET/POST pages: dashboards, console, reviews, workflows, runs, audit, settings (api/web/README.md). */
export function pageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  const signedIn = pageSession(deps.sql);
  for (const path of [
    '/',
    '/first-run/*',
    '/dashboards',
    '/dashboards/*',
    '/console',
    '/console/*',
    '/reviews',
    '/reviews/*',
    '/runs',
    '/runs/*',
    '/workflows',
    '/workflows/*',
    '/audit',
    '/settings',
    '/settings/*',
    '/people',
    '/people/*',
    '/databases',
    '/databases/*',
    '/organization',
    '/organization/*',
  ])
    app.use(path, signedIn);
  // Every revoke, delete and remove asks first, saying what will happen (kit/confirm.tsx).
  const askFirst = confirmDestructive(confirmationRules(deps));
  for (const path of [
    '/people/*',
    '/databases/*',
    '/organization/*',
    '/settings/*',
    '/workflows/*',
    '/dashboards/*',
  ])
    app.use(path, askFirst);

  app.get('/', (c) => c.redirect('/dashboards', 302));
  // The landing page carries the first-run checklist for admins still setting up.
  app.use('/dashboards', firstRunBanner(deps));
  app.route('/', firstRunPageRoutes(deps));
  app.route('/', dashboardPageRoutes(deps));
  app.route('/', consolePageRoutes(deps));
  app.route('/', workflowPageRoutes(deps));
  app.route('/', reviewPageRoutes(deps));
  app.route('/', runPageRoutes(deps));
  app.route('/', auditPageRoutes(deps));
  app.route('/', aiConnectPageRoutes(deps));
  app.route('/', settingsPageRoutes(deps));
  app.route('/', peoplePageRoutes(deps));
  app.route('/', databasePageRoutes(deps));
  app.route('/', organizationPageRoutes(deps));
  return app;
}
