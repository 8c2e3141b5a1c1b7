import { describe, expect, it } from 'vitest';
import { AddressRefusedError, isRefusedAddress, safeRequest } from './http.ts';

describe('isRefusedAddress (DESIGN.md: link-local and cloud metadata addresses are refused)', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    '100.100.100.200',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
    '0.0.0.0',
  ])('refuses %s', (a) => expect(isRefusedAddress(a)).toBe(true));
  it.each(['127.0.0.1', '10.0.0.5', '192.168.1.1', '8.8.8.8', '::1', 'not-an-ip'])('allows %s', (a) =>
    expect(isRefusedAddress(a)).toBe(false),
  );
  it('refuses metadata host names and non-http schemes before connecting', async () => {
    const req = (url: string) =>
      safeRequest({
        method: 'GET',
        url: new URL(url),
        headers: {},
        body: null,
        timeoutMs: 1000,
        maxBodyBytes: 10,
      });
    await expect(req('http://metadata.google.internal/computeMetadata/v1/')).rejects.toBeInstanceOf(
      AddressRefusedError,
    );
    await expect(req('http://[fe80::1]/')).rejects.toBeInstanceOf(AddressRefusedError);
    await expect(req('file:///etc/passwd')).rejects.toBeInstanceOf(AddressRefusedError);
  });
});
