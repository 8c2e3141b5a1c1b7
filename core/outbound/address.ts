// Which IP addresses the service may connect to on its own (API steps, chat, tracker, client ID
// metadata documents). A URL chosen by someone else must not reach the service's own network
// (draft-ietf-oauth-client-id-metadata-document-01 §6.5 SSRF; the same holds for an API step a
// workflow author writes). Only global unicast addresses pass; IPv6 forms that embed an IPv4
// address (mapped, NAT64, 6to4) are judged by the IPv4 address inside.
import { isIPv4, isIPv6 } from 'node:net';

/** [first octets, prefix length] of IPv4 ranges that are not the public internet (RFC 6890). */
const IPV4_REFUSED: Array<[number[], number]> = [
  [[0], 8], // "this network", incl. the unspecified 0.0.0.0 (RFC 1122 §3.2.1.3)
  [[10], 8], // private (RFC 1918)
  [[100, 64], 10], // shared address space / CGNAT (RFC 6598)
  [[127], 8], // loopback
  [[169, 254], 16], // link-local (RFC 3927), incl. cloud metadata 169.254.169.254
  [[172, 16], 12], // private (RFC 1918)
  [[192, 0, 0], 24], // IETF protocol assignments (RFC 6890)
  [[192, 0, 2], 24], // documentation (RFC 5737)
  [[192, 88, 99], 24], // 6to4 relay anycast (RFC 7526)
  [[192, 168], 16], // private (RFC 1918)
  [[198, 18], 15], // benchmarking (RFC 2544)
  [[198, 51, 100], 24], // documentation
  [[203, 0, 113], 24], // documentation
  [[224], 4], // multicast (RFC 5771)
  [[240], 4], // reserved, incl. broadcast 255.255.255.255
];

/** True when the address is a public unicast address a document may be fetched from. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return publicV4(address.split('.').map(Number));
  if (isIPv6(address)) {
    const bytes = ipv6Bytes(address);
    return bytes !== null && publicV6(bytes);
  }
  return false;
}

/** The address as bytes (4 or 16), or null when it is not an IP literal. */
export function addressBytes(address: string): number[] | null {
  if (isIPv4(address)) return address.split('.').map(Number);
  if (isIPv6(address)) return ipv6Bytes(address);
  return null;
}

/**
 * True when `address` lies in base/prefix. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the
 * IPv4 address it reaches, both as the address and as the base.
 */
export function inRange(address: string, base: string, prefix: number): boolean {
  const a = unmapped(addressBytes(address));
  const b = unmapped(addressBytes(base));
  if (!a || !b || a.length !== b.length) return false;
  const bits = b.length === 4 && prefix > 32 ? prefix - 96 : prefix;
  return inPrefix(a, b, bits);
}

function unmapped(bytes: number[] | null): number[] | null {
  if (bytes?.length !== 16) return bytes;
  const mapped = bytes.slice(0, 10).every((x) => x === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

function inPrefix(bytes: number[], base: number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const i = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false;
  }
  return true;
}

function publicV4(bytes: number[]): boolean {
  return !IPV4_REFUSED.some(([base, prefix]) => inPrefix(bytes, base, prefix));
}

function publicV6(b: number[]): boolean {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2): a socket to it reaches a.b.c.d.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return publicV4(b.slice(12));
  // 64:ff9b::/96 NAT64 (RFC 6052): translated to the embedded IPv4 address.
  if (inPrefix(b, [0x00, 0x64, 0xff, 0x9b], 96)) return publicV4(b.slice(12));
  // Everything outside global unicast 2000::/3 (RFC 4291 §2.4): ::, ::1, IPv4-compatible ::/96,
  // discard 100::/64, unique-local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast.
  if ((b[0]! & 0xe0) !== 0x20) return false;
  // 2001::/23 IETF protocol assignments (Teredo, benchmarking, ORCHID) and 2001:db8::/32 docs.
  if (inPrefix(b, [0x20, 0x01, 0x00], 23) || inPrefix(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return false;
  // 2002::/16 6to4 (RFC 3056): bytes 2-5 are the IPv4 address the relay forwards to.
  if (b[0] === 0x20 && b[1] === 0x02) return publicV4(b.slice(2, 6));
  return true;
}

/** The 16 bytes of an IPv6 address (zone id dropped, a trailing dotted IPv4 part expanded). */
export function ipv6Bytes(address: string): number[] | null {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const left = groups(halves[0]);
  const right = groups(halves[1]);
  const fill = halves.length === 2 ? 8 - left.length - right.length : 0;
  if (fill < 0) return null;
  const all = [...left, ...Array<string>(fill).fill('0'), ...right];
  if (all.length !== 8) return null;
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    const n = Number.parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  return bytes;
}
