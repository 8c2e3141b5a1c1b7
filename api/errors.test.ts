import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import {
  type AppError,
  badRequest,
  conflict,
  forbidden,
  notFound,
  problemResponse,
  tooManyRequests,
  unauthorized,
  validationFailed,
} from './errors.ts';

// Pins the code-to-status mapping and the RFC 9457 shape (STYLE.md 6).
describe('application errors to problem+json', () => {
  const cases: Array<[AppError, number, string]> = [
    [badRequest('x'), 400, 'bad-request'],
    [unauthorized(), 401, 'unauthorized'],
    [forbidden(), 403, 'forbidden'],
    [notFound(), 404, 'not-found'],
    [conflict('x'), 409, 'conflict'],
    [validationFailed([{ path: 'name', message: 'required' }]), 422, 'validation'],
    [tooManyRequests(), 429, 'rate-limited'],
  ];
  for (const [err, status, slug] of cases) {
    it(`${slug} → ${status}`, async () => {
      const app = new Hono();
      app.get('/x', (c) => problemResponse(c, err, 'https://cs.example'));
      const res = await app.request('/x');
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = await res.json();
      expect(body).toMatchObject({ type: `https://cs.example/problems/${slug}`, status, instance: '/x' });
      expect(typeof body.title).toBe('string');
      expect(typeof body.detail).toBe('string');
    });
  }

  it('lists field errors on 422', async () => {
    const app = new Hono();
    app.get('/x', (c) =>
      problemResponse(c, validationFailed([{ path: 'credentials.0.username', message: 'required' }]), ''),
    );
    const body = await (await app.request('/x')).json();
    expect(body.errors).toEqual([{ path: 'credentials.0.username', message: 'required' }]);
    expect(body.detail).toContain('credentials.0.username');
  });
});
