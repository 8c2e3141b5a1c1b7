// Pure rules of the authorization server, pinned without a server: redirect URIs (RFC 6749
// §3.1.2, RFC 8252 §7, OAuth 2.1 §4.1.1), client metadata defaults (RFC 7591 §2), PKCE S256.
import { describe, expect, it } from 'vitest';
import { s256 } from '../../identity/oauth-authorize.ts';
import { checkMetadata } from '../../identity/oauth-clients.ts';
import { InvalidClientMetadata, InvalidRedirectUri } from '../../identity/oauth-errors.ts';
import { redirectUriMatches, redirectUriProblem } from '../../identity/oauth-redirect.ts';

describe('redirect URI registration', () => {
  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'http://127.0.0.1:33418/callback',
    'http://localhost/cb',
    'http://[::1]:8080/cb',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'com.example.app:/oauth2redirect',
  ])('accepts %s', (uri) => expect(redirectUriProblem(uri)).toBeNull());

  it.each([
    ['http://app.example/cb', 'https'],
    ['https://app.example/cb#x', 'fragment'],
    ['javascript:alert(1)', 'javascript'],
    ['data:text/html,hi', 'data'],
    ['https://user:pw@app.example/cb', 'user information'],
    ['/relative', 'absolute'],
  ])('refuses %s', (uri, why) => expect(redirectUriProblem(uri)).toContain(why));
});

describe('redirect URI matching', () => {
  it('is exact for non-loopback URIs', () => {
    expect(redirectUriMatches('https://a.example/cb', 'https://a.example/cb')).toBe(true);
    expect(redirectUriMatches('https://a.example/cb', 'https://a.example/cb/')).toBe(false);
    expect(redirectUriMatches('https://a.example/cb', 'https://a.example/cb?x=1')).toBe(false);
    expect(redirectUriMatches('https://a.example:443/cb', 'https://a.example:444/cb')).toBe(false);
    expect(redirectUriMatches('cursor://x/cb', 'cursor://x/cb2')).toBe(false);
  });

  it('lets the loopback port vary and treats localhost as 127.0.0.1 (RFC 8252 §7.3)', () => {
    expect(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:51000/cb')).toBe(true);
    expect(redirectUriMatches('http://localhost:3000/cb', 'http://127.0.0.1:4000/cb')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:51000/other')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1/cb', 'https://127.0.0.1/cb')).toBe(false);
    expect(redirectUriMatches('http://[::1]/cb', 'http://127.0.0.1/cb')).toBe(false);
  });
});

describe('client metadata (RFC 7591 §2)', () => {
  it('fills defaults and keeps only supported scopes', () => {
    expect(
      checkMetadata({ redirect_uris: ['https://a.example/cb'], scope: 'openid mcp profile' }),
    ).toMatchObject({
      client_name: 'Unnamed client',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp',
    });
  });

  it('refuses what it cannot honour, with the right error class', () => {
    expect(() => checkMetadata({})).toThrow(InvalidRedirectUri);
    expect(() => checkMetadata({ redirect_uris: 'https://a.example/cb' })).toThrow(InvalidRedirectUri);
    expect(() =>
      checkMetadata({ redirect_uris: ['https://a.example/cb'], grant_types: ['implicit'] }),
    ).toThrow(InvalidClientMetadata);
    expect(() =>
      checkMetadata({
        redirect_uris: ['https://a.example/cb'],
        grant_types: ['refresh_token'],
        response_types: ['code'],
      }),
    ).toThrow(InvalidClientMetadata);
  });
});

describe('PKCE S256 (RFC 7636 Appendix B)', () => {
  it('matches the RFC example', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });
});
