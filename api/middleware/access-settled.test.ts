import { describe, expect, it } from 'vitest';
import { mayChangeAccess } from './access-settled.ts';

describe('which answers wait for the access caches', () => {
  it('query-only routes do not wait', () => {
    for (const path of [
      '/mcp',
      '/console',
      '/api/v1/desk/query-requests',
      '/api/v1/desk/query-requests/qr_1',
      '/api/v1/desk/query-requests/qr_1/approve',
      '/api/v1/desk/query-requests/qr_1/run',
      '/reviews/qr_1/review',
      '/reviews/qr_1/undo',
    ])
      expect(mayChangeAccess('POST', path, 200), path).toBe(false);
  });

  it('every other change waits, and so does anything that only looks like a query route', () => {
    for (const path of [
      '/api/v1/desk/databases/db_1/grants',
      '/api/v1/api-keys',
      '/api/v1/users/usr_1',
      '/api/v1/tokens',
      '/logout',
      '/console/saved',
      '/mcp/extra',
      '/api/v1/desk/query-requests/qr_1/approve/more',
      '/api/v1/desk/query-requests-x',
      '/reviews/qr_1',
    ])
      expect(mayChangeAccess('POST', path, 200), path).toBe(true);
    expect(mayChangeAccess('DELETE', '/api/v1/api-keys/key_1', 204)).toBe(true);
    expect(mayChangeAccess('PATCH', '/api/v1/users/usr_1', 200)).toBe(true);
  });

  it('reads and refusals never wait', () => {
    expect(mayChangeAccess('GET', '/api/v1/api-keys', 200)).toBe(false);
    expect(mayChangeAccess('POST', '/api/v1/api-keys', 422)).toBe(false);
  });
});
