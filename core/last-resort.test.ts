import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isSocketError } from './last-resort.ts';

const CHILD = fileURLToPath(new URL('../test/fixtures/last-resort-child.ts', import.meta.url));

function runChild(mode: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', CHILD, mode], (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
    child.stdin?.end();
  });
}

describe('the last-resort handler', () => {
  it('logs a socket error no one listened for and keeps the process up', async () => {
    const { code, stdout } = await runChild('socket');
    expect(code).toBe(0);
    expect(stdout).toMatch(/"code":"ECONNREFUSED".*the process keeps serving/);
    expect(stdout).toContain('still serving');
  }, 20_000);

  it('still ends the process on any other uncaught error', async () => {
    const { code, stdout } = await runChild('bug');
    expect(code).toBe(1);
    expect(stdout).toMatch(/uncaught error; the process exits/);
    expect(stdout).not.toContain('still serving');
  }, 20_000);

  it('tells socket errors from others', () => {
    const errno = (code: string, syscall?: string) => Object.assign(new Error(code), { code, syscall });
    expect(isSocketError(errno('ECONNRESET', 'read'))).toBe(true);
    expect(isSocketError(errno('ENETUNREACH', 'connect'))).toBe(true);
    expect(isSocketError(errno('ERR_SSL_WRONG_VERSION_NUMBER'))).toBe(true);
    expect(isSocketError(new TypeError("Cannot read properties of null (reading 'setServername')"))).toBe(
      false,
    );
    expect(isSocketError(errno('ENOENT', 'open'))).toBe(false);
    expect(isSocketError('ECONNRESET')).toBe(false);
  });
});
