import { describe, expect, it } from 'vitest';
import { parseAllowList } from '../../config/outbound-allow.ts';
import { OutboundPolicy } from './policy.ts';

// A resolver answering from a table: these tests never touch the network.
const DNS: Record<string, string[]> = {
  'public.example': ['93.184.215.14'],
  'private.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '192.168.0.7'],
  'temporal.internal': ['10.9.9.9'],
};
const resolve = async (host: string) => {
  const list = DNS[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const policy = (allow = '') =>
  new OutboundPolicy(
    parseAllowList(allow, 'COUNTERSIGN_OUTBOUND_ALLOW'),
    [
      { host: '127.0.0.1', port: 3000 },
      { host: 'temporal.internal', port: 7233 },
    ],
    resolve,
  );
const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'allowed',
    (err: { failure?: string }) => err.failure ?? 'threw',
  );

describe('the outbound network policy', () => {
  it.each([
    'http://127.0.0.1/',
    'http://127.8.0.1/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://169.254.169.254/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[::1]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://private.example/',
    'http://mixed.example/',
    'http://metadata.google.internal/',
  ])('refuses %s by default', async (url) => {
    expect(await failure(policy().target(new URL(url)))).toBe('refused');
  });

  it('allows a public address and connects to the checked one', async () => {
    expect(await policy().target(new URL('https://public.example/x'))).toEqual({
      host: 'public.example',
      port: 443,
      address: '93.184.215.14',
      family: 4,
    });
  });

  it('a name that does not resolve is a dns failure, a scheme other than http(s) refused', async () => {
    expect(await failure(policy().target(new URL('http://nowhere.example/')))).toBe('dns');
    expect(await failure(policy().target(new URL('file:///etc/passwd')))).toBe('refused');
  });

  it('lets the operator allow hosts and ranges, with or without a port', async () => {
    const p = policy('10.0.0.0/8,private.example:8080,[::1]:9000');
    expect(await failure(p.target(new URL('http://10.200.0.1/')))).toBe('allowed');
    expect(await failure(p.target(new URL('http://[::ffff:10.0.0.1]/')))).toBe('allowed');
    expect(await failure(p.target(new URL('http://private.example:8080/')))).toBe('allowed');
    expect(await failure(p.target(new URL('http://[::1]:9000/')))).toBe('allowed');
    expect(await failure(p.target(new URL('http://[::1]:9001/')))).toBe('refused');
    expect(await failure(p.target(new URL('http://192.168.0.1/')))).toBe('refused');
  });

  it('keeps the service and Temporal refused under a broad range, allowed when listed exactly', async () => {
    const broad = policy('10.0.0.0/8,127.0.0.0/8');
    expect(await failure(broad.target(new URL('http://10.9.9.9:7233/')))).toBe('refused');
    expect(await failure(broad.target(new URL('http://temporal.internal:7233/')))).toBe('refused');
    expect(await failure(broad.target(new URL('http://127.0.0.1:3000/metrics')))).toBe('refused');
    expect(await failure(broad.target(new URL('http://10.9.9.9:8080/')))).toBe('allowed');
    const exact = policy('temporal.internal,127.0.0.1');
    expect(await failure(exact.target(new URL('http://temporal.internal:7233/')))).toBe('allowed');
    expect(await failure(exact.target(new URL('http://127.0.0.1:3000/')))).toBe('allowed');
  });

  it('limits ports when asked (metadata documents), unless an entry names the port', async () => {
    const onlyPorts = [443];
    expect(await failure(policy().target(new URL('https://public.example:8443/'), { onlyPorts }))).toBe(
      'port',
    );
    expect(await failure(policy().target(new URL('https://public.example/'), { onlyPorts }))).toBe('allowed');
    const listed = policy('public.example:8443');
    expect(await failure(listed.target(new URL('https://public.example:8443/'), { onlyPorts }))).toBe(
      'allowed',
    );
  });
});

describe('COUNTERSIGN_OUTBOUND_ALLOW', () => {
  it('names the variable and the entry it cannot read', () => {
    expect(() => parseAllowList('10.0.0.0/8, 10.0.0.0/33', 'COUNTERSIGN_OUTBOUND_ALLOW')).toThrow(
      /^COUNTERSIGN_OUTBOUND_ALLOW: "10.0.0.0\/33" is not/,
    );
    expect(() => parseAllowList('host:99999', 'X')).toThrow(/X: "host:99999"/);
    expect(() => parseAllowList('http://a.example', 'X')).toThrow(/X: "http:\/\/a.example"/);
    expect(parseAllowList(' A.Example ,::1, [fd00::1]:80', 'X')).toEqual([
      { kind: 'name', host: 'a.example', port: null },
      { kind: 'range', base: '::1', prefix: 128, port: null, text: '::1' },
      { kind: 'range', base: 'fd00::1', prefix: 128, port: 80, text: '[fd00::1]:80' },
    ]);
  });
});
