import { Hono } from 'hono';
import { PAGE_ASSETS } from './assets.ts';

/** GET /assets/:name — the pages' stylesheets and scripts; public, cached briefly. */
export function assetRoutes(): Hono {
  const app = new Hono();
  app.get('/assets/:name', (c) => {
    const asset = PAGE_ASSETS.get(c.req.param('name'));
    if (!asset) return c.notFound();
    return c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=300' });
  });
  return app;
}
