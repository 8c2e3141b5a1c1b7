import { describe, expect, it } from 'vitest';
import { cacheSeconds, checkClientIdUrl, checkDocument, clientIdentity, isUrlClientId } from './document.ts';
import { CimdRefused } from './errors.ts';

const ID = 'https://client.example/oauth/metadata.json';

describe('client_id URLs (draft -01 §3)', () => {
  it('tells URL client ids from registered ones', () => {
    expect(isUrlClientId(ID)).toBe(true);
    expect(isUrlClientId('http://client.example/x')).toBe(true);
    expect(isUrlClientId('cli_01JB0000000000000000000000')).toBe(false);
  });

  it('accepts a canonical https URL with a path and refuses every other shape', () => {
    expect(checkClientIdUrl(ID).hostname).toBe('client.example');
    expect(checkClientIdUrl(`${ID}?v=1`).search).toBe('?v=1');
    for (const bad of [
      'http://client.example/metadata.json',
      'https://client.example',
      'https://client.example/',
      'https://user:pw@client.example/m.json',
      'https://client.example/m.json#frag',
      'https://client.example/a/../m.json',
      'https://client.example/./m.json',
      'https://client.example/%2e%2e/m.json',
      'https://CLIENT.example/m.json',
      'https://client.example:443/m.json',
      'https:client.example/m.json',
    ]) {
      expect(() => checkClientIdUrl(bad), bad).toThrow(CimdRefused);
    }
  });
});

describe('documents (draft -01 §4.1)', () => {
  const good = { client_id: ID, client_name: 'Tool', redirect_uris: ['http://127.0.0.1/cb'] };

  it('accepts a public client and applies the registration defaults', () => {
    expect(checkDocument(ID, good)).toMatchObject({
      client_name: 'Tool',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      scope: 'mcp',
    });
  });

  it('refuses a mismatched client_id, secrets, secret methods, missing or bad redirect URIs', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, client_id: `${ID}/` }, /client_id/],
      [{ ...good, client_id: undefined }, /client_id/],
      [{ ...good, client_secret: 's' }, /secret/],
      [{ ...good, token_endpoint_auth_method: 'private_key_jwt' }, /none/],
      [{ ...good, redirect_uris: undefined }, /redirect_uris/],
      [{ ...good, redirect_uris: ['javascript:alert(1)'] }, /invalid/],
      [[good], /JSON object/],
    ];
    for (const [body, why] of cases) expect(() => checkDocument(ID, body)).toThrow(why);
  });
});

describe('cache lifetime (draft -01 §4.4)', () => {
  it('follows Cache-Control within a floor and a ceiling', () => {
    expect(cacheSeconds(null)).toBe(600);
    expect(cacheSeconds('no-store')).toBe(0);
    expect(cacheSeconds('public, no-cache')).toBe(0);
    expect(cacheSeconds('max-age=0')).toBe(0);
    expect(cacheSeconds('max-age=5')).toBe(60);
    expect(cacheSeconds('public, max-age=3600')).toBe(3600);
    expect(cacheSeconds('max-age=31536000, immutable')).toBe(86_400);
    expect(cacheSeconds('private')).toBe(600);
  });
});

describe('what the consent screen can vouch for', () => {
  const cimd = (client_name: string) => clientIdentity({ id: ID, kind: 'cimd', client_name });
  it('names the document host; marks a name that claims another site', () => {
    expect(cimd('Tool')).toEqual({ name: 'Tool', host: 'client.example', nameUnverified: false });
    expect(cimd('Tool by app.client.example').nameUnverified).toBe(false);
    expect(cimd('Claude (claude.ai)').nameUnverified).toBe(true);
    expect(cimd('client.example.evil.test').nameUnverified).toBe(true);
  });
  it('marks every registered client name, which nothing backs', () => {
    expect(clientIdentity({ id: 'cli_1', kind: 'dcr', client_name: 'Cursor' })).toEqual({
      name: 'Cursor',
      host: null,
      nameUnverified: true,
    });
  });
});
