// Fetches a client ID metadata document with the limits of
// draft-ietf-oauth-client-id-metadata-document-01 §6.5 (SSRF) and §6.6 (response size): https
// only, the host resolved once and every address checked, the connection made to the checked
// address (no second DNS lookup a rebinding server could answer differently), no redirects,
// a size and a time limit, JSON only.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Config } from '../../config/env.ts';
import { OutboundError, type OutboundFailure } from '../../core/outbound/errors.ts';
import { outboundPolicy } from '../../core/outbound/policy.ts';
import { type OutboundResponse, outboundRequest } from '../../core/outbound/request.ts';
import { CimdRefused } from './errors.ts';

/** §6.6 recommends a limit of 5 kilobytes; real documents are a few hundred bytes. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
/** The whole fetch (DNS, connect, TLS, body) must finish within this. */
export const FETCH_TIMEOUT_MS = 5_000;
/**
 * Documents are fetched from the https port only: an anonymous authorization request must not
 * make the server probe other ports of public hosts. An allow entry with a port lifts this.
 */
export const DOCUMENT_PORTS = [443];

export interface FetchedDocument {
  body: unknown;
  cacheControl: string | null;
}

export type FetchConfig = Parameters<typeof outboundPolicy>[0] & Pick<Config, 'cimd'>;

/** GETs the document at an already validated https client_id URL. */
export async function fetchDocument(url: URL, config: FetchConfig): Promise<FetchedDocument> {
  let res: OutboundResponse;
  try {
    res = await outboundRequest(outboundPolicy(config), {
      method: 'GET',
      url,
      headers: { accept: 'application/json', 'user-agent': 'Countersign (client metadata)' },
      body: null,
      timeoutMs: FETCH_TIMEOUT_MS,
      maxBodyBytes: MAX_DOCUMENT_BYTES,
      extraAllow: config.cimd.allowHosts,
      onlyPorts: DOCUMENT_PORTS,
      ...(config.cimd.caFile ? { ca: [...rootCertificates, extraCa(config.cimd.caFile)] } : {}),
    });
  } catch (err) {
    if (err instanceof OutboundError) throw refusal(err);
    throw err;
  }
  // draft -01 §4: only a 200 answer is a document; a redirect is not followed (it could point
  // anywhere, including where the address check would have refused).
  if (res.status !== 200) {
    const redirect = res.status >= 300 && res.status < 400;
    throw new CimdRefused(
      redirect ? 'its server answered with a redirect' : `its server answered ${res.status}`,
      `status ${res.status}`,
    );
  }
  const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new CimdRefused('it is not served as application/json', `content-type ${type}`);
  }
  try {
    const body = JSON.parse(res.body.toString('utf8')) as unknown;
    return { body, cacheControl: headerValue(res.headers['cache-control']) };
  } catch {
    throw new CimdRefused('it is not valid JSON', 'invalid JSON');
  }
}

/** What the authorization page says for each way the fetch failed (the log gets the detail). */
function refusal(err: OutboundError): CimdRefused {
  const why: Record<OutboundFailure, string> = {
    refused: 'its host is not on the public internet',
    port: 'it is not served on the https port 443',
    dns: 'its host name does not resolve',
    timeout: 'its server did not answer within 5 seconds',
    too_large: 'it is larger than 5 KB',
    unreachable: 'its server could not be reached over https',
    connection_refused: 'its server could not be reached over https',
    reset: 'its server could not be reached over https',
    tls: 'its server could not be reached over https',
    other: 'its server could not be reached over https',
  };
  return new CimdRefused(why[err.failure], err.message.slice(0, 300));
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

// The CA file is configuration, read once per process (not state: every replica reads the same).
const caCache = new Map<string, string>();
function extraCa(file: string): string {
  let pem = caCache.get(file);
  if (pem === undefined) {
    pem = readFileSync(file, 'utf8');
    caCache.set(file, pem);
  }
  return pem;
}
