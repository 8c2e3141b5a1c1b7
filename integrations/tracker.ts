// The issue tracker (Linear compatible): label lookups through its GraphQL API at a configurable
// URL, and verification and reading of its webhooks.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { OutboundPolicy } from '../core/outbound/policy.ts';
import { outboundRequest } from '../core/outbound/request.ts';

/** Header carrying the hex HMAC-SHA256 of the raw body (Linear's `linear-signature`). */
export const SIGNATURE_HEADER = 'linear-signature';
/** Header carrying the delivery's unique id; a redelivery repeats it. */
export const DELIVERY_HEADER = 'linear-delivery';
/** How far the signed `webhookTimestamp` may be from now (Linear's recommendation: one minute). */
export const MAX_WEBHOOK_AGE_MS = 60_000;

export interface TrackerConfig {
  trackerApiUrl: string;
  trackerApiKey: string | null;
  trackerWebhookSecret: string | null;
}

/** The integration is set up when both the API key and the webhook secret are configured. */
export function trackerConfigured(config: TrackerConfig): boolean {
  return config.trackerApiKey !== null && config.trackerWebhookSecret !== null;
}

const LABEL_QUERY = `query CountersignLabelByName($name: String!) {
  issueLabels(filter: { name: { eqIgnoreCase: $name } }, first: 2) { nodes { id name } }
}`;

/** The label's id and exact name, or null when the tracker has no such label. */
export async function findLabel(
  config: TrackerConfig,
  policy: OutboundPolicy,
  name: string,
): Promise<{ id: string; name: string } | null> {
  if (!config.trackerApiKey) throw new Error('the tracker integration is not configured');
  // One GraphQL POST as Linear's SDK sends it (the personal API key is the bare Authorization
  // value), made through the outbound policy like every connection the service opens.
  const res = await outboundRequest(policy, {
    method: 'POST',
    url: new URL(config.trackerApiUrl),
    headers: { authorization: config.trackerApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query: LABEL_QUERY, variables: { name } }),
    timeoutMs: 20_000,
    maxBodyBytes: 1024 * 1024,
  });
  let payload: { data?: { issueLabels?: { nodes?: { id: string; name: string }[] } }; errors?: unknown[] };
  try {
    payload = JSON.parse(res.body.toString('utf8')) as typeof payload;
  } catch {
    throw new Error(`the tracker answered ${res.status} without JSON`);
  }
  if (res.status !== 200 || payload.errors?.length || !payload.data?.issueLabels)
    throw new Error(`the tracker refused the label lookup (status ${res.status})`);
  return payload.data.issueLabels.nodes?.[0] ?? null;
}

/** What the service reads from an Issue webhook (Linear's payload, trimmed). */
export interface IssueEvent {
  action: string;
  type: string;
  data: { id?: string; identifier?: string; description?: string | null; labelIds?: string[] };
  updatedFrom?: { labelIds?: string[] };
  webhookTimestamp?: number;
}

export class WebhookRejected extends Error {
  override name = 'WebhookRejected';
}

/**
 * Verifies a webhook as Linear specifies: HMAC-SHA256 of the raw body with the webhook secret,
 * compared in constant time, then the signed `webhookTimestamp` must be within a minute of now
 * (a captured delivery cannot be replayed later). Returns the parsed payload.
 */
export function verifyWebhook(
  secret: string,
  rawBody: Buffer,
  signature: string | undefined,
  now = Date.now(),
): IssueEvent {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(signature ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new WebhookRejected('invalid webhook signature');
  }
  let payload: IssueEvent;
  try {
    payload = JSON.parse(rawBody.toString('utf8')) as IssueEvent;
  } catch {
    throw new WebhookRejected('the webhook body is not JSON');
  }
  const ts = payload.webhookTimestamp;
  if (typeof ts !== 'number' || !Number.isFinite(ts) || Math.abs(now - ts) > MAX_WEBHOOK_AGE_MS) {
    throw new WebhookRejected('the webhook timestamp is missing or too old');
  }
  return payload;
}

/** Label ids the issue gained with this event: all of them on create, the new ones on update. */
export function addedLabelIds(event: IssueEvent): string[] {
  if (event.type !== 'Issue') return [];
  const now = event.data.labelIds ?? [];
  if (event.action === 'create') return now;
  if (event.action !== 'update' || !event.updatedFrom?.labelIds) return [];
  const before = new Set(event.updatedFrom.labelIds);
  return now.filter((id) => !before.has(id));
}

/**
 * SPEC.md 2.1 tracker trigger: for each input, a heading line `#### <key>` and the value on the
 * following line. Keys without such a heading are absent from the result (the caller reports them).
 */
export function readIssueInputs(description: string, keys: readonly string[]): Record<string, string> {
  const lines = description.split(/\r?\n/);
  const out: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const m = /^####\s+(.+?)\s*#*\s*$/.exec(lines[i]!);
    if (!m || !keys.includes(m[1]!) || Object.hasOwn(out, m[1]!)) continue;
    // The value is the next line; blank lines between heading and value are tolerated.
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (j < lines.length && !/^#{1,6}\s/.test(lines[j]!)) out[m[1]!] = lines[j]!;
  }
  return out;
}
