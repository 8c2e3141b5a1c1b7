// COUNTERSIGN_OUTBOUND_ALLOW: the hosts and address ranges the operator lets the service reach
// although the outbound network policy refuses them by default (core/outbound/policy.ts).
import { isIP } from 'node:net';

/** One entry: a host name or an address range, optionally limited to one port. */
export type AllowEntry =
  | { kind: 'name'; host: string; port: number | null }
  | { kind: 'range'; base: string; prefix: number; port: number | null; text: string };

const NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Parses a comma list of `host`, `host:port`, `IP`, `IP:port`, `[IPv6]`, `[IPv6]:port` and
 * `IP/prefix` entries. Throws an Error naming the first bad entry (the value is configuration,
 * never a secret).
 */
export function parseAllowList(text: string, variable: string): AllowEntry[] {
  const entries: AllowEntry[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim().toLowerCase();
    if (!item) continue;
    const entry = parseEntry(item);
    if (!entry) {
      throw new Error(
        `${variable}: "${item}" is not a host name, host:port, IP address, [IPv6]:port or CIDR range`,
      );
    }
    entries.push(entry);
  }
  return entries;
}

function parseEntry(item: string): AllowEntry | null {
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(item);
  if (cidr) {
    const family = isIP(cidr[1]!);
    const prefix = Number(cidr[2]);
    if (family === 0 || prefix > (family === 4 ? 32 : 128)) return null;
    return { kind: 'range', base: cidr[1]!, prefix, port: null, text: item };
  }
  let host = item;
  let port: number | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
  const withPort = /^([^:]+):(\d+)$/.exec(item);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2] ? Number(bracketed[2]) : null;
    if (isIP(host) !== 6) return null;
  } else if (withPort) {
    host = withPort[1]!;
    port = Number(withPort[2]);
  }
  if (port !== null && (port < 1 || port > 65535)) return null;
  const family = isIP(host);
  if (family !== 0) return { kind: 'range', base: host, prefix: family === 4 ? 32 : 128, port, text: item };
  const name = host.replace(/\.$/, '');
  return NAME.test(name) ? { kind: 'name', host: name, port } : null;
}
