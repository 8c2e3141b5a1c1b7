import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { advertisedUrl } from './advertise.ts';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address, family, internal, netmask: '', mac: '', cidr: null }) as NetworkInterfaceInfo;
const host = {
  lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
  eth0: [iface('fe80::1', 'IPv6'), iface('fd00::7', 'IPv6'), iface('10.4.0.17', 'IPv4')],
};
const base = { internalUrl: null, podIp: null, port: 3000 };

describe('advertisedUrl', () => {
  it('is the bound address when HOST names one', () => {
    expect(advertisedUrl({ ...base, host: '127.0.0.2' }, host)).toBe('http://127.0.0.2:3000');
    expect(advertisedUrl({ ...base, host: 'fd00::9' }, host)).toBe('http://[fd00::9]:3000');
  });

  it('bound to every interface: POD_IP, else the first non-internal interface address', () => {
    expect(advertisedUrl({ ...base, host: '0.0.0.0', podIp: '10.9.8.7' }, host)).toBe('http://10.9.8.7:3000');
    expect(advertisedUrl({ ...base, host: '0.0.0.0' }, host)).toBe('http://10.4.0.17:3000');
    expect(advertisedUrl({ ...base, host: '::', podIp: 'fd00::5' }, host)).toBe('http://[fd00::5]:3000');
    expect(
      advertisedUrl({ ...base, host: '::' }, { eth0: [iface('fe80::1', 'IPv6'), iface('fd00::7', 'IPv6')] }),
    ).toBe('http://[fd00::7]:3000');
    expect(advertisedUrl({ ...base, host: '0.0.0.0' }, { lo: host.lo })).toBe('http://127.0.0.1:3000');
  });

  it('COUNTERSIGN_INTERNAL_URL overrides, and BASE_URL is never used', () => {
    expect(
      advertisedUrl(
        { ...base, host: '0.0.0.0', podIp: '10.9.8.7', internalUrl: 'https://cs-0.cs:8443/' },
        host,
      ),
    ).toBe('https://cs-0.cs:8443');
  });
});
