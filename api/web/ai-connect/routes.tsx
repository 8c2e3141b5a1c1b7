// "Connect an AI client": the MCP URL, settings per client, what the person's AI may reach.
import { Hono } from 'hono';
import type { Deps } from '../../../core/deps.ts';
import { aiReach } from '../../../workspace/ai-connect.ts';
import { type PageEnv, render } from '../kit/page-context.tsx';
import { AiConnectPage } from './view.tsx';

export function aiConnectPageRoutes(deps: Deps): Hono<PageEnv> {
  const app = new Hono<PageEnv>();
  app.get('/settings/ai', async (c) => {
    const p = c.get('principal');
    const reach = await aiReach(deps.sql, { orgId: p.orgId, userId: p.userId, role: p.role });
    return render(
      c,
      'ai',
      'Connect an AI client',
      <AiConnectPage mcpUrl={`${deps.config.baseUrl}/mcp`} reach={reach} isAdmin={p.role !== 'member'} />,
    );
  });
  return app;
}
