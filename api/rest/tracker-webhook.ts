import { Hono } from 'hono';
import { handleIssueEvent } from '../../automation/tracker.ts';
import type { Deps } from '../../core/deps.ts';
import { notFound, unauthorized } from '../../core/errors.ts';
import {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookRejected,
} from '../../integrations/tracker.ts';
import type { AppEnv } from '../env.ts';
import { doc } from '../openapi.ts';

/** Largest webhook body read (Linear's own default limit is of the same order). */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The tracker's webhook (POST /api/v1/integrations/tracker/webhook). Authenticated by its
 * signature, not a key: the tracker signs each delivery with the shared webhook secret.
 */
export function trackerWebhookRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post(
    '/webhook',
    doc('Workflows', 'Issue-tracker webhook (signature-verified label trigger)', { auth: ['none'] }),
    async (c) => {
      const secret = deps.config.trackerWebhookSecret;
      if (!secret) throw notFound('the tracker integration is not configured');
      // The signature covers the exact bytes received: verify before parsing anything.
      const raw = Buffer.from(await c.req.arrayBuffer());
      if (raw.length > MAX_BODY_BYTES) throw unauthorized('the webhook body is too large');
      let event: ReturnType<typeof verifyWebhook>;
      try {
        event = verifyWebhook(secret, raw, c.req.header(SIGNATURE_HEADER));
      } catch (err) {
        if (err instanceof WebhookRejected) throw unauthorized(err.message);
        throw err;
      }
      // Linear sends a unique id per delivery and repeats it on redelivery; without one the body's
      // own signature stands in, which is just as stable for a byte-identical redelivery.
      const deliveryId = c.req.header(DELIVERY_HEADER) ?? `sig:${c.req.header(SIGNATURE_HEADER)}`;
      const outcome = await handleIssueEvent(deps, deliveryId, event);
      return c.json(outcome);
    },
  );
  return app;
}
