import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets (API keys, personal access tokens, sessions, OAuth codes and tokens) are
 * random, shown once, and stored only as SHA-256 hashes: with 256 bits of entropy a fast hash
 * is safe, and the lookup needs no per-row salt. A secret carries its row id so the row is
 * found by id and the hash compared in constant time (STYLE.md 8).
 *
 *   <kind>_<row id without prefix>_<43 chars of base64url random>
 */
export interface MintedSecret {
  /** The whole secret, shown once to its owner. */
  secret: string;
  /** What is stored. */
  hash: string;
}

export function mintSecret(kind: string, rowId: string): MintedSecret {
  const secret = `${kind}_${rowId.slice(rowId.indexOf('_') + 1)}_${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Splits `<kind>_<ulid>_<random>` into kind and ulid; null when the shape is wrong. */
export function parseSecret(secret: string): { kind: string; ulid: string } | null {
  const m = /^([a-z]+)_([0-9A-HJKMNP-TV-Z]{26})_[A-Za-z0-9_-]{43}$/.exec(secret);
  return m ? { kind: m[1]!, ulid: m[2]! } : null;
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

function scryptAsync(password: string, salt: Buffer, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Password hash: `scrypt$N$r$p$<salt b64>$<hash b64>` (parameters stored so they can be raised later). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, hashText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hashText, 'base64');
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password,
      Buffer.from(saltText, 'base64'),
      expected.length,
      { N: Number(n), r: Number(r), p: Number(p), maxmem: 64 * 1024 * 1024 },
      (err, k) => (err ? reject(err) : resolve(k)),
    ),
  );
  return timingSafeEqual(key, expected);
}
