// A fetch() for client libraries that take one (the chat client) or call it themselves (the
// tracker's GraphQL request): the same policy and connection rules as every other outbound call.

import type { OutboundPolicy } from './policy.ts';
import { type OutboundRequest, outboundRequest } from './request.ts';

/** A fetch-compatible function through the policy; failures reject with OutboundError. */
export function policyFetch(
  policy: OutboundPolicy,
  limits: Pick<OutboundRequest, 'timeoutMs' | 'maxBodyBytes'>,
): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const res = await outboundRequest(policy, {
      method: request.method,
      url: new URL(request.url),
      headers,
      body,
      ...limits,
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
    }
    const empty = res.status === 204 || res.status === 304;
    return new Response(empty ? null : new Uint8Array(res.body), {
      status: res.status,
      statusText: res.statusText,
      headers: out,
    });
  }) as typeof fetch;
}
