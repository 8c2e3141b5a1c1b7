// Every admin command works while `npm run dev` runs (its embedded store serves one
// connection, which dev mode holds), and when it does not run, with no extra setup.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startDev } from '../../cli/dev.ts';
import { localCommandSocket } from '../../cli/local-commands.ts';
import { loadConfig } from '../../config/env.ts';

const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function cli(dataDir: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      // Not process.env: no DATABASE_URL, as a developer's shell beside `npm run dev`.
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        COUNTERSIGN_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

const sink = new Writable({ write: (_c, _e, done) => done() });

describe('the CLI beside dev mode', () => {
  it('create-user, create-token, create-api-key and verify-audit work while dev runs, and after', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cs-cli-dev-'));
    dirs.push(dataDir);
    const dev = await startDev(
      loadConfig({ COUNTERSIGN_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }),
      sink,
    );
    try {
      // Only its owner may talk to the channel.
      expect((await stat(localCommandSocket(dataDir))).mode & 0o777).toBe(0o600);
      const user = await cli(dataDir, [
        'create-user',
        '--email',
        'cli.admin@example.test',
        '--role',
        'admin',
        '--password',
        'a long cli password',
      ]);
      expect(user.err).toBe('');
      expect(user.code).toBe(0);
      expect(user.out).toMatch(/created usr_\w+ cli\.admin@example\.test \(admin\)/);

      const token = await cli(dataDir, ['create-token', '--email', 'cli.admin@example.test']);
      expect(token.code).toBe(0);
      const secret = /(cspat_\S+)/.exec(token.out)![1]!;
      const me = await fetch(`${dev.apiUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ email: 'cli.admin@example.test', role: 'admin' });

      const key = await cli(dataDir, [
        'create-api-key',
        '--name',
        'from cli',
        '--owner',
        'cli.admin@example.test',
      ]);
      expect(key.code).toBe(0);
      const apiKey = /(cskey_\S+)/.exec(key.out)![1]!;
      expect((await fetch(`${dev.apiUrl}/api/v1/me`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);

      const verify = await cli(dataDir, ['verify-audit']);
      expect(verify.code).toBe(0);
      expect(verify.out).toMatch(/ok, \d+ entries/);

      // A usage error comes back as one with its message, and the dev process keeps running.
      const bad = await cli(dataDir, ['create-token', '--email', 'nobody@example.test']);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('no user with email nobody@example.test');
      expect((await fetch(`${dev.apiUrl}/healthz`)).status).toBe(200);
    } finally {
      await dev.stop();
    }
    // Dev mode stopped: the command opens the embedded store itself.
    const after = await cli(dataDir, [
      'create-token',
      '--email',
      'cli.admin@example.test',
      '--name',
      'offline',
    ]);
    expect(after.err).toBe('');
    expect(after.code).toBe(0);
    expect(after.out).toMatch(/cspat_/);
  }, 180_000);
});
