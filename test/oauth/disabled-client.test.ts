// An AI client the organization disabled is issued nothing: its access tokens are refused at /mcp
// and its refresh tokens at the token endpoint (RFC 6749 §5.2 invalid_grant), until it is enabled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect, mcpStatusOf, tokenRequest } from './flow.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

const control = (clientId: string, disabled: boolean) =>
  svc.fetch(`/api/v1/ai-clients/${encodeURIComponent(clientId)}`, {
    method: 'PUT',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ disabled, database_ids: null }),
  });

describe('a disabled AI client', () => {
  it('cannot refresh, and its access token is refused; enabled again, the same refresh token works', async () => {
    const { tokens, client } = await connect(svc, svc.admin);
    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(200);
    expect((await control(client.client_id, true)).status).toBe(200);

    expect((await mcpStatusOf(svc, tokens.access_token)).status).toBe(401);
    const refresh = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect(refresh.status).toBe(400);
    const body = (await refresh.json()) as Record<string, unknown>;
    expect(body.error).toBe('invalid_grant');
    expect(body.access_token).toBeUndefined();

    // Disabling is the organization's switch, not a revocation: switched back, the client resumes.
    expect((await control(client.client_id, false)).status).toBe(200);
    const again = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect(again.status).toBe(200);
    const fresh = (await again.json()) as { access_token: string };
    expect((await mcpStatusOf(svc, fresh.access_token)).status).toBe(200);
  });
});
