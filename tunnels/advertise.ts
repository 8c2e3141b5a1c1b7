// The address a `serve` replica records with the agent tunnels it holds, for the worker and the
// other replicas to relay through it (agent/README.md "Replicas"). It must reach this very
// process: never BASE_URL, which names the load balancer and so lands on any replica. In order:
// COUNTERSIGN_INTERNAL_URL when the operator set one (a DNS name per pod, a sidecar, TLS); else
// the bound HOST:PORT when HOST is a concrete address; else, bound to every interface (0.0.0.0 or
// ::), POD_IP (the Kubernetes downward API) or the first non-internal interface address.
import { networkInterfaces } from 'node:os';

export interface AdvertiseInput {
  /** COUNTERSIGN_INTERNAL_URL, the override. */
  internalUrl: string | null;
  /** HOST, as the listener was bound. */
  host: string;
  /** The port the listener got (PORT, or the one picked for PORT=0). */
  port: number;
  /** POD_IP from the downward API. */
  podIp: string | null;
}

type Interfaces = ReturnType<typeof networkInterfaces>;

const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]', '::0']);

/** The base URL other Countersign processes use to reach this one, without a trailing slash. */
export function advertisedUrl(input: AdvertiseInput, interfaces: Interfaces = networkInterfaces()): string {
  if (input.internalUrl) return input.internalUrl.replace(/\/+$/, '');
  const host = WILDCARDS.has(input.host)
    ? (input.podIp ?? firstExternalAddress(interfaces, input.host.includes(':')) ?? loopbackOf(input.host))
    : input.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${input.port}`;
}

/**
 * The first address of a non-internal interface, IPv4 first unless bound to `::` (which also
 * accepts IPv4 on dual-stack hosts, so an IPv4 address is still right there). Link-local IPv6
 * addresses need a zone to be dialled and are skipped.
 */
function firstExternalAddress(interfaces: Interfaces, v6Bound: boolean): string | null {
  const all = Object.values(interfaces).flatMap((list) => list ?? []);
  const usable = all.filter((a) => !a.internal && !(a.family === 'IPv6' && a.address.startsWith('fe80:')));
  const v4 = usable.find((a) => a.family === 'IPv4');
  if (v4) return v4.address;
  return v6Bound ? (usable.find((a) => a.family === 'IPv6')?.address ?? null) : null;
}

/** A host with no other interface: only processes on it can relay, over loopback. */
const loopbackOf = (host: string) => (host.includes(':') ? '::1' : '127.0.0.1');
