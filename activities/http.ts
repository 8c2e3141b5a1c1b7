// Outgoing HTTP for API steps. The address is checked when the socket connects (our own DNS lookup),
// so a name that resolves to a refused address, now or after a DNS change, is refused too.
// Redirects are not followed: a redirect to a refused address must not slip through.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';

/** A request to a refused address: link-local ranges and cloud metadata services. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
}

// DESIGN.md: requests to link-local and cloud metadata addresses are refused (SSRF). Loopback and
// private ranges stay allowed: on-premises APIs are what API steps are for.
const refused = new BlockList();
refused.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local; AWS, GCP, Azure, OCI metadata at .169.254
refused.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
refused.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network": 0.0.0.0 reaches local services
refused.addSubnet('fe80::', 10, 'ipv6'); // link-local
refused.addAddress('fd00:ec2::254', 'ipv6'); // AWS IMDS over IPv6
const REFUSED_NAMES = new Set([
  'metadata.google.internal',
  'metadata',
  'instance-data',
  'metadata.azure.com',
]);

/** True when the service must not connect to `address` (an IP literal). */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // IPv4-mapped IPv6 (::ffff:169.254.169.254) reaches the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return refused.check(mapped[1]!, 'ipv4');
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as LookupAddress[];
    if (list.some((a) => isRefusedAddress(a.address))) {
      return callback(
        new AddressRefusedError(`refused: ${hostname} resolves to a link-local or metadata address`),
        '',
      );
    }
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(new Error(`${hostname} has no address`), '');
    callback(null, first.address, first.family);
  });
}

export interface HttpResult {
  status: number;
  contentType: string;
  body: Buffer;
}

/** One HTTP request with a deadline and a response size cap; throws AddressRefusedError before connecting. */
export function safeRequest(args: {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | null;
  timeoutMs: number;
  maxBodyBytes: number;
}): Promise<HttpResult> {
  const { url } = args;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new AddressRefusedError(`refused: only http and https URLs, not ${url.protocol}`));
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (REFUSED_NAMES.has(host.toLowerCase().replace(/\.$/, '')) || isRefusedAddress(host)) {
    return Promise.reject(new AddressRefusedError(`refused: ${host} is a link-local or metadata address`));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResult>((resolve, reject) => {
    const req = send(url, { method: args.method, headers: args.headers, lookup: guardedLookup }, (res) => {
      readBody(res, args.maxBodyBytes).then(
        (body) =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', body }),
        reject,
      );
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no complete response within ${args.timeoutMs / 1000} s`)),
      args.timeoutMs,
    );
    req.on('error', reject);
    req.on('close', () => clearTimeout(timer));
    req.end(args.body ?? undefined);
  });
}

function readBody(res: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        res.destroy(new Error(`the response body is larger than ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}
