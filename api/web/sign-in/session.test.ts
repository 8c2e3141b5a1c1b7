import { describe, expect, it } from 'vitest';
import { addressGroup } from '../../../identity/oauth-clients.ts';
import { safeNext } from './session.tsx';

// The one check both password and SSO sign-in send `next` through.
describe('safeNext keeps the browser on this origin', () => {
  const base = 'https://cs.example.com';
  it.each([
    '/\t/evil.test',
    '/\n/evil.test',
    '/\r\n/evil.test',
    '/\\evil.test',
    '\\\\evil.test',
    '//evil.test',
    '/.//evil.test',
    '/%2F%2Fevil.test',
    '/%2fevil.test',
    '/%5Cevil.test',
    'https://evil.test/',
    'https://cs.example.com.evil.test/',
    'javascript:alert(1)',
    '',
  ])('refuses %j', (next) => {
    expect(safeNext(next, base)).toBe('/');
  });

  it.each([
    ['/runs', '/runs'],
    ['/runs?status=failed#x', '/runs?status=failed#x'],
    [
      '/oauth/authorize?client_id=cli_1&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
      '/oauth/authorize?client_id=cli_1&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
    ],
    ['/a/../settings', '/settings'],
  ])('keeps %j', (next, kept) => {
    expect(safeNext(next, base)).toBe(kept);
  });
});

describe('registration limits count IPv6 by /64', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:bbbb:cccc:dddd:eeee', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });
});
