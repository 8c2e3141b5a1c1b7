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
      workerVersioning: { mode: 'auto', deploymentName: 'countersign', buildId: null },
    });
  });

  it('refuses a worker versioning mode or deployment name it does not know', () => {
    expect(() => loadConfig({ WORKER_VERSIONING: 'sometimes' })).toThrow(/WORKER_VERSIONING/);
    // Temporal joins deployment name and build id with a dot.
    expect(() => loadConfig({ TEMPORAL_DEPLOYMENT_NAME: 'a.b' })).toThrow(/TEMPORAL_DEPLOYMENT_NAME/);
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

  it('reads SMTP_URL and SMTP_FROM together; a bad value names its variable, never the password', () => {
    expect(loadConfig({}).smtp).toBeNull();
    expect(
      loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'cs@example.com' }).smtp,
    ).toEqual({ url: 'smtps://u:p@mail.example.com:465', from: 'cs@example.com' });
    expect(() => loadConfig({ SMTP_URL: 'http://u:hunter22@mail.example.com' })).toThrow(
      /SMTP_URL: must be an smtp/,
    );
    try {
      loadConfig({ SMTP_URL: 'http://u:hunter22@mail.example.com', SMTP_FROM: 'cs@example.com' });
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter22');
    }
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com' })).toThrow(/SMTP_URL and SMTP_FROM/);
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'not an address' })).toThrow(
      /SMTP_FROM: must be the sender address/,
    );
  });
});
