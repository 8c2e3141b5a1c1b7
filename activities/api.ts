import { headerContext } from '../automation/snapshot.ts';
import type { Deps } from '../core/deps.ts';
import { OutboundError } from '../core/outbound/errors.ts';
import { outboundPolicy } from '../core/outbound/policy.ts';
import { type OutboundResponse, outboundRequest } from '../core/outbound/request.ts';
import { signServiceJwt } from '../identity/signing-keys.ts';
import type { HttpMethod } from '../workflows/types.ts';
import { nonRetryable } from './failures.ts';

export interface ApiStepInput {
  runId: string;
  workflowId: string;
  stepId: string;
  method: HttpMethod;
  /** Rendered by the workflow (each `${}` percent-encoded). */
  endpoint: string;
  /** Header name → sealed value (opened here, never in the workflow or its history). */
  headers: Record<string, string>;
  /** The rendered JSON body, or null for none. */
  body: { json: unknown } | null;
  expectedStatus: number;
  includeServiceJwt: boolean;
  timeoutSeconds: number | null;
}

/** SPEC.md 2.1 api step output. */
export interface ApiStepOutput {
  status_code: number;
  body: unknown;
}

/** Bytes of a response body an API step reads at most; more fails the step. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Characters of an unexpected response's body quoted in the run's error. */
export const ERROR_EXCERPT_CHARS = 300;

/** Makes an API step's request (SPEC.md 2.1 "API action behavior"). */
export async function callApiStep(
  deps: Pick<Deps, 'sql' | 'keyring' | 'config'>,
  input: ApiStepInput,
): Promise<ApiStepOutput> {
  let url: URL;
  try {
    url = new URL(input.endpoint);
  } catch {
    throw nonRetryable('ValidationError', 'the endpoint is not a valid URL');
  }
  const headers: Record<string, string> = {};
  for (const [name, sealed] of Object.entries(input.headers)) {
    headers[name] = deps.keyring.decrypt(sealed, headerContext(input.workflowId, input.stepId, name));
  }
  const body = input.body === null ? null : JSON.stringify(input.body.json);
  if (body !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  if (input.includeServiceJwt) {
    // SPEC.md 2.1: aud = the endpoint, sub = the run id, workflow_id = the workflow id.
    headers['x-service-jwt'] = await signServiceJwt(deps, {
      aud: input.endpoint,
      sub: input.runId,
      workflow_id: input.workflowId,
    });
  }
  let res: OutboundResponse;
  try {
    // core/outbound/policy.ts: the address is checked again here, against what the name resolves
    // to now (it was checked when the definition was saved), and the socket goes to that address.
    res = await outboundRequest(outboundPolicy(deps.config), {
      method: input.method,
      url,
      headers,
      body,
      timeoutMs: (input.timeoutSeconds ?? 30) * 1000,
      maxBodyBytes: MAX_RESPONSE_BYTES,
    });
  } catch (err) {
    if (err instanceof OutboundError && err.failure === 'refused')
      throw nonRetryable('AddressRefused', `refused: ${err.message}`);
    if (err instanceof OutboundError && err.failure === 'too_large')
      throw nonRetryable('ResponseTooLarge', err.message);
    throw err;
  }
  const text = res.body.toString('utf8');
  if (res.status !== input.expectedStatus) {
    const excerpt = text.length > ERROR_EXCERPT_CHARS ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
    throw nonRetryable(
      'UnexpectedStatus',
      `expected status ${input.expectedStatus} but got ${res.status}${excerpt ? `: ${excerpt}` : ''}`,
    );
  }
  return { status_code: res.status, body: parseBody(res.headers['content-type'] ?? '', text) };
}

/** SPEC.md 2.1: `body` is the parsed JSON when the response is JSON, else the text. */
function parseBody(contentType: string, text: string): unknown {
  if (text === '') return null;
  if (!/\bjson\b/i.test(contentType)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
