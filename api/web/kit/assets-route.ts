import { Hono } from 'hono';
import { bundledAsset, PAGE_ASSETS } from './assets.ts';

/** GET /assets/:name — the pages' stylesheets and scripts; public, cached briefly. */
export function assetRoutes(): Hono {
  const app = new Hono();
  app.get('/assets/:name', async (c) => {
    const name = c.req.param('name');
    const asset = PAGE_ASSETS.get(name) ?? (await bundledAsset(name));
    if (!asset) return c.notFound();
    return c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=300' });
  });
  return app;
}
