// Fetches a client ID metadata document with the limits of
// draft-ietf-oauth-client-id-metadata-document-01 §6.5 (SSRF) and §6.6 (response size): https
// only, the host resolved once and every address checked, the connection made to the checked
// address (no second DNS lookup a rebinding server could answer differently), no redirects,
// a size and a time limit, JSON only.
import { lookup as dnsLookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { CimdConfig } from '../../config/env.ts';
import { isPublicAddress } from './address.ts';
import { CimdRefused } from './errors.ts';

/** §6.6 recommends a limit of 5 kilobytes; real documents are a few hundred bytes. */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
/** The whole fetch (DNS, connect, TLS, body) must finish within this. */
export const FETCH_TIMEOUT_MS = 5_000;

export interface FetchedDocument {
  body: unknown;
  cacheControl: string | null;
}

/** GETs the document at an already validated https client_id URL. */
export async function fetchDocument(url: URL, config: CimdConfig): Promise<FetchedDocument> {
  const deadline = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const address = await withDeadline(checkedAddress(url, config), deadline);
  return new Promise<FetchedDocument>((resolve, reject) => {
    const timeout = () =>
      fail(new CimdRefused('its server did not answer within 5 seconds', 'fetch timed out'));
    const req = request(
      {
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || 443,
        path: url.pathname + url.search,
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'Countersign (client metadata)' },
        // A fresh connection each time: no pooled socket to some earlier address is reused.
        agent: false,
        lookup: pinned(address),
        ...(config.caFile ? { ca: [...rootCertificates, extraCa(config.caFile)] } : {}),
      },
      (res) => {
        // draft -01 §4: only a 200 answer is a document; a redirect is not followed (it could
        // point anywhere, including where the address check above would have refused).
        if (res.statusCode !== 200) {
          res.resume();
          const redirect = (res.statusCode ?? 0) >= 300 && (res.statusCode ?? 0) < 400;
          return fail(
            new CimdRefused(
              redirect ? 'its server answered with a redirect' : `its server answered ${res.statusCode}`,
              `status ${res.statusCode}`,
            ),
          );
        }
        const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json') {
          res.resume();
          return fail(new CimdRefused('it is not served as application/json', `content-type ${type}`));
        }
        const tooBig = () => fail(new CimdRefused('it is larger than 5 KB', 'document too large'));
        if (Number(res.headers['content-length'] ?? 0) > MAX_DOCUMENT_BYTES) return tooBig();
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_DOCUMENT_BYTES) return tooBig();
          chunks.push(chunk);
        });
        res.on('error', (err) => fail(unreachable(err)));
        res.on('end', () => {
          if (size > MAX_DOCUMENT_BYTES) return;
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
            finish({ body, cacheControl: headerValue(res.headers['cache-control']) });
          } catch {
            fail(new CimdRefused('it is not valid JSON', 'invalid JSON'));
          }
        });
      },
    );
    let settled = false;
    const finish = (doc: FetchedDocument) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', timeout);
      resolve(doc);
    };
    function fail(err: CimdRefused) {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', timeout);
      req.destroy();
      reject(err);
    }
    if (deadline.aborted) return timeout();
    deadline.addEventListener('abort', timeout, { once: true });
    req.on('error', (err) => fail(unreachable(err)));
    req.end();
  });
}

/**
 * Resolves the host once and checks every address it has (an attacker's name may list a public
 * and a private one). An IP literal is checked as it is. Hosts in OAUTH_CIMD_ALLOW_HOSTS skip
 * the check: tests serve documents from localhost.
 */
async function checkedAddress(url: URL, config: CimdConfig): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowed = config.allowHosts.includes(host);
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      // IPv4 first: the order does not weaken the check, every address is checked below.
      addresses = await dnsLookup(host, { all: true, verbatim: false });
    } catch {
      throw new CimdRefused('its host name does not resolve', 'DNS lookup failed');
    }
  }
  if (addresses.length === 0) throw new CimdRefused('its host name does not resolve', 'no addresses');
  if (!allowed && !addresses.every((a) => isPublicAddress(a.address))) {
    throw new CimdRefused('its host is not on the public internet', `non-public address for ${host}`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** The DNS lookup counts against the same 5 seconds as the rest of the fetch. */
function withDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new CimdRefused('its server did not answer within 5 seconds', 'DNS lookup timed out'));
    if (deadline.aborted) return onAbort();
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}

/** A lookup that always answers the address already checked (Node may ask for one or all). */
function pinned(target: { address: string; family: 4 | 6 }): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

function unreachable(err: Error): CimdRefused {
  // The message names the TLS or socket problem; it holds no secret, only the peer's behaviour.
  return new CimdRefused('its server could not be reached over https', err.message.slice(0, 200));
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
