import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './env.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      databaseUrl: null,
      temporalAddress: null,
      temporalNamespace: 'default',
      temporalTaskQueue: 'countersign',
      port: 3000,
      host: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:3000',
      dataDir: '.countersign',
      logLevel: 'info',
    });
  });

  it('names the variable of a bad value and never echoes the value', () => {
    const secret = 'not-base64-of-32-bytes-SECRET';
    try {
      loadConfig({ COUNTERSIGN_ENCRYPTION_KEY: secret, PORT: 'eighty' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as ConfigError).message;
      expect(message).toContain('COUNTERSIGN_ENCRYPTION_KEY');
      expect(message).toContain('PORT');
      expect(message).not.toContain(secret);
    }
  });

  it('requires the first admin email and password together', () => {
    expect(() => loadConfig({ COUNTERSIGN_ADMIN_EMAIL: 'a@example.com' })).toThrow(/set both or neither/);
  });

  it('strips a trailing slash from BASE_URL', () => {
    expect(loadConfig({ BASE_URL: 'https://cs.example.com/' }).baseUrl).toBe('https://cs.example.com');
  });
});
