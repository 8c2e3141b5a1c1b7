// The one network policy for every connection the service opens on someone else's behalf: API
// steps, chat, the tracker's API and client ID metadata documents. A URL a workflow author or an
// anonymous OAuth client chose must not reach the service's own network (SSRF, OWASP API7:2023):
// loopback, link-local (cloud metadata at 169.254.169.254), private (RFC 1918, RFC 4193 ULA),
// CGNAT (RFC 6598), unspecified and reserved addresses, in every spelling (IPv4-mapped IPv6,
// NAT64, 6to4), are refused; so are the service's own listening address and the Temporal
// frontend and UI, whatever their address, since an API step there reads metrics or drives
// other organizations' runs. The operator lists exceptions in COUNTERSIGN_OUTBOUND_ALLOW.
//
// The check runs on every address the host resolves to (a name listing a public and a private
// address is refused), and the caller connects to the checked address itself: a second DNS
// answer (rebinding) is never asked for.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Config } from '../../config/env.ts';
import type { AllowEntry } from '../../config/outbound-allow.ts';
import { inRange, isPublicAddress } from './address.ts';
import { OutboundError } from './errors.ts';

/** Names of cloud metadata services: refused by name too, before any DNS lookup. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata',
  'instance-data',
  'metadata.azure.com',
]);

export interface CheckedTarget {
  /** The URL's host name (no brackets), for SNI and the Host header. */
  host: string;
  port: number;
  /** The checked address the connection must go to. */
  address: string;
  family: 4 | 6;
}

export interface TargetOptions {
  /** Extra exceptions for this purpose only (OAUTH_CIMD_ALLOW_HOSTS for metadata documents). */
  extraAllow?: AllowEntry[];
  /** Ports allowed unless an allow entry names the port (metadata documents: 443 only). */
  onlyPorts?: number[];
}

type Endpoint = { host: string; port: number };

export class OutboundPolicy {
  private readonly protectedEndpoints: Endpoint[];
  private readonly endpointAddresses = new Map<string, { at: number; addresses: string[] }>();

  constructor(
    private readonly allow: AllowEntry[],
    protectedEndpoints: Endpoint[],
    private readonly resolve: (host: string) => Promise<Array<{ address: string; family: number }>> = (
      host,
    ) => dnsLookup(host, { all: true, verbatim: false }),
  ) {
    this.protectedEndpoints = protectedEndpoints.map((e) => ({ host: bare(e.host), port: e.port }));
  }

  /**
   * Resolves the URL's host and checks every address; returns the address to connect to.
   * Throws OutboundError `refused` (policy) or `dns` (no address).
   */
  async target(url: URL, options: TargetOptions = {}): Promise<CheckedTarget> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundError('refused', `only http and https URLs are allowed, not ${url.protocol}`);
    }
    const host = bare(url.hostname);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const allow = [...this.allow, ...(options.extraAllow ?? [])];
    const namedAllowed = allow.some((e) => e.kind === 'name' && e.host === host && portOk(e, port));
    if (!namedAllowed && METADATA_NAMES.has(host)) {
      throw new OutboundError('refused', `${host} is a cloud metadata service`);
    }
    let addresses: Array<{ address: string; family: number }>;
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw new OutboundError('dns', `the host name ${host} does not resolve`);
      }
    }
    if (addresses.length === 0) throw new OutboundError('dns', `the host name ${host} has no address`);
    for (const a of addresses) {
      const why = await this.refusal(a.address, port, allow, namedAllowed);
      if (why) throw new OutboundError('refused', `${host} ${why}`);
    }
    if (options.onlyPorts && !options.onlyPorts.includes(port) && !portListed(allow, host, port)) {
      throw new OutboundError('port', `port ${port} is not allowed (only ${options.onlyPorts.join(', ')})`);
    }
    const first = addresses[0]!;
    return { host, port, address: first.address, family: first.family === 6 ? 6 : 4 };
  }

  /** Why the address may not be reached, or null. */
  private async refusal(
    address: string,
    port: number,
    allow: AllowEntry[],
    namedAllowed: boolean,
  ): Promise<string | null> {
    // The control plane stays refused under a broad range entry: only an entry naming exactly
    // this host or this one address lets it through.
    if (await this.isProtected(address, port)) {
      const exact =
        namedAllowed || allow.some((e) => e.kind === 'range' && isSingle(e) && rangeHas(e, address, port));
      return exact ? null : 'is the service itself or its Temporal server';
    }
    if (isPublicAddress(address)) return null;
    if (namedAllowed || allow.some((e) => e.kind === 'range' && rangeHas(e, address, port))) return null;
    return 'is not on the public internet (loopback, private, link-local or reserved address)';
  }

  private async isProtected(address: string, port: number): Promise<boolean> {
    for (const e of this.protectedEndpoints) {
      if (e.port !== port) continue;
      for (const a of await this.addressesOf(e.host)) if (sameAddress(a, address)) return true;
    }
    return false;
  }

  /** A protected endpoint's addresses; a wildcard listen address means every local address. */
  private async addressesOf(host: string): Promise<string[]> {
    if (host === '0.0.0.0' || host === '::') return localAddresses();
    if (isIP(host)) return [host];
    // The control plane's names (e.g. `temporal` in a compose file) rarely change: looked up at
    // most once a minute, not on every outbound request.
    const hit = this.endpointAddresses.get(host);
    if (hit && Date.now() - hit.at < 60_000) return hit.addresses;
    try {
      const addresses = (await this.resolve(host)).map((a) => a.address);
      this.endpointAddresses.set(host, { at: Date.now(), addresses });
      return addresses;
    } catch {
      // Unresolvable now: nothing to compare against (asked again next time).
      return hit?.addresses ?? [];
    }
  }
}

/** What the policy reads from the configuration. */
export type PolicyConfig = Pick<
  Config,
  'outboundAllow' | 'host' | 'port' | 'baseUrl' | 'internalUrl' | 'temporalAddress' | 'temporalUiUrl'
>;

/** The policy of a configuration: its exceptions and the endpoints it must never reach. */
export function policyFor(config: PolicyConfig): OutboundPolicy {
  const endpoints: Endpoint[] = [{ host: config.host, port: config.port }];
  for (const u of [config.baseUrl, config.internalUrl, config.temporalUiUrl]) {
    const e = u ? urlEndpoint(u) : null;
    if (e) endpoints.push(e);
  }
  if (config.temporalAddress) {
    const m = /^(.*):(\d+)$/.exec(config.temporalAddress);
    if (m) endpoints.push({ host: m[1]!, port: Number(m[2]) });
  }
  return new OutboundPolicy(config.outboundAllow, endpoints);
}

const cache = new WeakMap<object, OutboundPolicy>();
/** One policy per configuration object (the configuration is read once per process). */
export function outboundPolicy(config: PolicyConfig): OutboundPolicy {
  let policy = cache.get(config);
  if (!policy) {
    policy = policyFor(config);
    cache.set(config, policy);
  }
  return policy;
}

function urlEndpoint(u: string): Endpoint | null {
  try {
    const url = new URL(u);
    return { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  } catch {
    return null;
  }
}

function bare(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
}

function portOk(e: AllowEntry, port: number): boolean {
  return e.port === null || e.port === port;
}

function portListed(allow: AllowEntry[], host: string, port: number): boolean {
  return allow.some(
    (e) =>
      e.port === port && (e.kind === 'name' ? e.host === host : isIP(host) !== 0 && rangeHas(e, host, port)),
  );
}

function rangeHas(e: AllowEntry & { kind: 'range' }, address: string, port: number): boolean {
  return portOk(e, port) && inRange(address, e.base, e.prefix);
}

function isSingle(e: AllowEntry & { kind: 'range' }): boolean {
  return e.prefix === (isIP(e.base) === 4 ? 32 : 128);
}

function sameAddress(a: string, b: string): boolean {
  return inRange(a, b, isIP(b) === 4 ? 32 : 128);
}

function localAddresses(): string[] {
  const out = ['127.0.0.1', '::1'];
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.push(i.address);
  return out;
}
