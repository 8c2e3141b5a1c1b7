import { describe, expect, it } from 'vitest';
import { ipv6Bytes, isPublicAddress } from './address.ts';

describe('isPublicAddress (draft-ietf-oauth-client-id-metadata-document-01 §6.5)', () => {
  it('refuses private, loopback, link-local, CGNAT, multicast, reserved and unspecified IPv4', () => {
    for (const a of [
      '0.0.0.0',
      '10.1.2.3',
      '100.64.0.1',
      '100.127.255.254',
      '127.0.0.1',
      '127.255.0.9',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '192.0.0.8',
      '198.18.0.1',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });

  it('refuses the same in IPv6 forms, including IPv4-mapped, NAT64 and 6to4 wrappers', () => {
    for (const a of [
      '::',
      '::1',
      '0:0:0:0:0:0:0:1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1%eth0',
      'febf::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::10.0.0.1',
      '2002:0a00:0001::1',
      '2001:db8::1',
      '2001::1',
      '::127.0.0.1',
      '100::1',
      'not an address',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });

  it('accepts public unicast addresses', () => {
    for (const a of [
      '1.1.1.1',
      '8.8.8.8',
      '100.63.255.255',
      '100.128.0.1',
      '172.32.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '2002:0808:0808::1',
    ]) {
      expect(isPublicAddress(a), a).toBe(true);
    }
  });

  it('parses IPv6 text into bytes', () => {
    expect(ipv6Bytes('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(ipv6Bytes('1::2::3')).toBeNull();
  });
});
