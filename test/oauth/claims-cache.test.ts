// Verified access-token claims are cached until the token expires (the MCP hot path);
// what can change after a token was issued is still read on every request. These tests use a
// token first (so it is cached) and then change the world under it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect, mcpStatusOf } from './flow.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { OAUTH_ACCESS_TOKEN_SECONDS: '2' } });
});

afterAll(async () => {
  await svc?.stop();
});

describe('cached access-token claims', () => {
  it('a cached token stops working when it expires', async () => {
    const { tokens } = await connect(svc, svc.admin);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_300));
    const res = await mcpStatusOf(svc, tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('a cached token stops working at once when its person is disabled', async () => {
    const { tokens } = await connect(svc, svc.admin);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);
    await svc.deps.sql`update users set disabled_at = now() where email = ${svc.admin.email}`;
    // Written as psql would: the service hears of it when the change's notification arrives.
    await svc.settled();
    try {
      expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(401);
    } finally {
      await svc.deps.sql`update users set disabled_at = null where email = ${svc.admin.email}`;
    }
  });

  it('a token altered after a valid one was cached is verified on its own and refused', async () => {
    const { tokens } = await connect(svc, svc.admin);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);
    const [head, payload, sig] = tokens.access_token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    claims.sub = 'usr_someone_else';
    const forged = `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    expect((await mcpStatusOf(svc, forged)).status).toBe(401);
  });
});
