import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/env.ts';
import { generateKey, Keyring } from './crypto.ts';

/**
 * The encryption key: COUNTERSIGN_ENCRYPTION_KEY, or in dev mode a key generated once and
 * kept in the data folder (mode 0600). A production process without a key refuses to start.
 */
export async function loadKeyring(config: Config, allowGenerated: boolean): Promise<Keyring> {
  if (config.encryptionKey) return Keyring.fromBase64(config.encryptionKey, config.encryptionOldKeys);
  if (!allowGenerated) {
    throw new Error(
      'COUNTERSIGN_ENCRYPTION_KEY is required (base64 of 32 random bytes: `openssl rand -base64 32`)',
    );
  }
  await mkdir(config.dataDir, { recursive: true });
  const file = join(config.dataDir, 'encryption.key');
  let key: string;
  try {
    key = (await readFile(file, 'utf8')).trim();
  } catch {
    key = generateKey();
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  }
  return Keyring.fromBase64(key, config.encryptionOldKeys);
}
