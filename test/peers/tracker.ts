// A local peer for the Linear-compatible tracker: answers the label lookup over GraphQL and signs
// webhooks the way Linear does (hex HMAC-SHA256 of the raw body in `linear-signature`).
import { createHmac, randomUUID } from 'node:crypto';
import { listen, readBody, sendJson } from './http-util.ts';

export interface TrackerPeer {
  url: string;
  apiKey: string;
  secret: string;
  labels: Array<{ id: string; name: string }>;
  close(): Promise<void>;
  /** A signed webhook delivery ready to POST: body, headers (delivery id fixed per call). */
  delivery(
    payload: Record<string, unknown>,
    opts?: { deliveryId?: string; secret?: string },
  ): {
    body: string;
    headers: Record<string, string>;
  };
}

export async function startTrackerPeer(
  apiKey = 'lin_api_test',
  secret = 'whsec-test-secret',
): Promise<TrackerPeer> {
  const labels = [
    { id: 'a1c5e0d2-0000-4000-8000-000000000001', name: 'Needs DB fix' },
    { id: 'a1c5e0d2-0000-4000-8000-000000000002', name: 'bug' },
  ];
  const server = await listen(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as { query: string; variables?: { name?: string } };
    // Linear takes a personal API key as the bare Authorization value.
    if (req.headers.authorization !== apiKey) {
      return sendJson(res, 400, {
        errors: [{ message: 'Authentication required', extensions: { type: 'authentication error' } }],
      });
    }
    if (!body.query.includes('issueLabels'))
      return sendJson(res, 400, { errors: [{ message: 'unsupported query' }] });
    const name = (body.variables?.name ?? '').toLowerCase();
    return sendJson(res, 200, {
      data: { issueLabels: { nodes: labels.filter((l) => l.name.toLowerCase() === name) } },
    });
  });
  return {
    url: `${server.url}/graphql`,
    apiKey,
    secret,
    labels,
    close: server.close,
    delivery(payload, opts = {}) {
      const body = JSON.stringify({ webhookTimestamp: Date.now(), ...payload });
      const signature = createHmac('sha256', opts.secret ?? secret)
        .update(body)
        .digest('hex');
      return {
        body,
        headers: {
          'content-type': 'application/json',
          'linear-signature': signature,
          'linear-delivery': opts.deliveryId ?? randomUUID(),
          'linear-event': 'Issue',
        },
      };
    },
  };
}
