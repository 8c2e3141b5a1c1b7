// Chat steps through the Slack Web API client, against a configurable base URL (CHAT_API_URL) so a
// Slack-compatible server or a local peer can stand in. Temporal retries failed steps, so the client
// itself never retries or waits out rate limits. The client library loads on the first message, not
// when a process starts.
import type { WebAPIPlatformError, WebClient } from '@slack/web-api';
import { policyFetch } from '../core/outbound/fetch.ts';
import type { OutboundPolicy } from '../core/outbound/policy.ts';

/** A chat call the service should not retry: the platform refused it (unknown channel, bad token). */
export class ChatRefusedError extends Error {
  override name = 'ChatRefusedError';
}

export interface ChatMessage {
  /** A channel id (`C…`) or a channel name with or without `#`. */
  channel: string;
  text: string;
  /** Reply in this message's thread (SPEC.md 2.1 chat_reply). */
  threadTs: string | null;
}

export interface ChatClient {
  post(message: ChatMessage): Promise<{ channel: string; timestamp: string }>;
}

const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;
const NAME_CACHE_MS = 5 * 60_000;

/** A chat client for the configured workspace; throws ChatRefusedError when no bot token is configured. */
export function createChatClient(
  config: { chatApiUrl: string; chatBotToken: string | null },
  policy: OutboundPolicy,
): ChatClient {
  if (!config.chatBotToken) {
    return {
      post: () => Promise.reject(new ChatRefusedError('chat is not configured: set CHAT_BOT_TOKEN')),
    };
  }
  const token = config.chatBotToken;
  let slack: Promise<{
    web: WebClient;
    isPlatformError: (err: unknown) => err is WebAPIPlatformError;
  }> | null = null;
  const client = () =>
    (slack ??= import('@slack/web-api').then(({ LogLevel, WebAPIPlatformError, WebClient }) => ({
      web: new WebClient(token, {
        slackApiUrl: config.chatApiUrl,
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
        logLevel: LogLevel.ERROR,
        timeout: 20_000,
        // Every request through the outbound network policy (core/outbound/policy.ts).
        fetch: policyFetch(policy, { timeoutMs: 20_000, maxBodyBytes: 1024 * 1024 }),
      }),
      isPlatformError: (err: unknown): err is WebAPIPlatformError => err instanceof WebAPIPlatformError,
    })));
  const names = new Map<string, { id: string; at: number }>();

  // chat.postMessage wants a channel id; a name is looked up with conversations.list.
  async function channelId(web: WebClient, channel: string): Promise<string> {
    if (CHANNEL_ID.test(channel)) return channel;
    const name = channel.replace(/^#/, '');
    const hit = names.get(name);
    if (hit && Date.now() - hit.at < NAME_CACHE_MS) return hit.id;
    let cursor: string | undefined;
    do {
      const page = await web.conversations.list({
        types: 'public_channel,private_channel',
        exclude_archived: true,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      for (const c of page.channels ?? []) {
        if (c.name && c.id) names.set(c.name, { id: c.id, at: Date.now() });
      }
      const found = names.get(name);
      if (found) return found.id;
      cursor = page.response_metadata?.next_cursor || undefined;
    } while (cursor);
    throw new ChatRefusedError(`no chat channel named #${name} (is the bot a member?)`);
  }

  return {
    async post(message) {
      const { web, isPlatformError } = await client();
      try {
        const channel = await channelId(web, message.channel);
        const res = await web.chat.postMessage({
          channel,
          text: message.text,
          unfurl_links: false,
          ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
        });
        if (!res.ts) throw new Error('the chat API answered without a message timestamp');
        return { channel: res.channel ?? channel, timestamp: res.ts };
      } catch (err) {
        if (isPlatformError(err)) {
          const { data } = err;
          // ratelimited is the platform's way of saying "later": let Temporal retry it.
          if (data.error === 'ratelimited') throw new Error('chat API rate limit');
          throw new ChatRefusedError(`chat API refused the message: ${data.error}`);
        }
        throw err;
      }
    },
  };
}
