// A local peer speaking the part of the Slack Web API the chat steps use: conversations.list
// (paged) and chat.postMessage (with thread_ts). Answers as Slack does: HTTP 200, `ok` in the body.
import { listen, readBody, sendJson } from './http-util.ts';

export interface PostedMessage {
  channel: string;
  text: string;
  thread_ts: string | null;
  ts: string;
}

export interface ChatPeer {
  url: string;
  token: string;
  channels: Array<{ id: string; name: string }>;
  messages: PostedMessage[];
  close(): Promise<void>;
}

export async function startChatPeer(token = 'xoxb-test-token'): Promise<ChatPeer> {
  const channels = [
    { id: 'C0000000001', name: 'general' },
    { id: 'C0000000002', name: 'ops-alerts' },
    { id: 'C0000000003', name: 'db-changes' },
  ];
  const messages: PostedMessage[] = [];
  let clock = 1_700_000_000;
  const server = await listen(async (req, res) => {
    const raw = await readBody(req);
    const params: Record<string, string> = (req.headers['content-type'] ?? '').includes('json')
      ? (JSON.parse(raw) as Record<string, string>)
      : Object.fromEntries(new URLSearchParams(raw));
    if (req.headers.authorization !== `Bearer ${token}`)
      return sendJson(res, 200, { ok: false, error: 'invalid_auth' });
    const method = new URL(req.url ?? '/', 'http://x').pathname.split('/').pop() ?? '';
    if (method === 'conversations.list') {
      // Two pages, one channel per page after the first, to exercise the client's paging.
      const start = params.cursor ? Number(params.cursor) : 0;
      const page = channels.slice(start, start + 1);
      const next = start + 1 < channels.length ? String(start + 1) : '';
      return sendJson(res, 200, { ok: true, channels: page, response_metadata: { next_cursor: next } });
    }
    if (method === 'chat.postMessage') {
      if (!channels.some((c) => c.id === params.channel))
        return sendJson(res, 200, { ok: false, error: 'channel_not_found' });
      const ts = `${clock++}.000100`;
      messages.push({
        channel: params.channel!,
        text: params.text ?? '',
        thread_ts: params.thread_ts ?? null,
        ts,
      });
      return sendJson(res, 200, {
        ok: true,
        channel: params.channel,
        ts,
        message: { text: params.text, ts },
      });
    }
    return sendJson(res, 200, { ok: false, error: 'unknown_method' });
  });
  return { url: `${server.url}/api/`, token, channels, messages, close: server.close };
}
