// The service's ES256 signing key: generated once, kept in the store with the private half sealed
// by the Keyring, and published as a JWKS at /.well-known/jwks.json. Workflow API steps sign
// `x-service-jwt` with it; the OAuth server signs access tokens with it.
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import type { Deps } from '../core/deps.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import {
  activeSigningKeys,
  insertSigningKey,
  lockSigningKeys,
  type SigningKeyRow,
} from '../store/signing-keys.ts';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  alg: typeof SIGNING_ALG;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A client or a transaction: the OAuth server signs inside its own transactions. */
type KeyDeps = { sql: Tx; keyring: Keyring };

// One load per store per process: the key changes only by rotation, which restarts processes.
const cache = new WeakMap<object, Promise<SigningKey>>();

/** The current signing key, created on first use (at most once across processes). */
export function getSigningKey(deps: KeyDeps): Promise<SigningKey> {
  // Not cached inside a caller's transaction: a key created there vanishes if it rolls back.
  if (!('begin' in deps.sql)) return loadOrCreate(deps);
  let key = cache.get(deps.sql);
  if (!key) {
    key = loadOrCreate(deps);
    key.catch(() => cache.delete(deps.sql));
    cache.set(deps.sql, key);
  }
  return key;
}

/** The public keys to publish (RFC 7517 JWK Set); never contains a private member. */
export async function publicJwks(deps: KeyDeps): Promise<{ keys: JWK[] }> {
  await getSigningKey(deps);
  const rows = await activeSigningKeys(deps.sql);
  return { keys: rows.map(publicOf) };
}

/** Signs a short-lived JWT with the current key. `claims` must not repeat iat/exp/iss. */
export async function signServiceJwt(
  deps: KeyDeps & { config: Pick<Deps['config'], 'baseUrl'> },
  claims: { aud: string; sub: string } & Record<string, string>,
  lifetimeSeconds = 60,
): Promise<string> {
  const key = await getSigningKey(deps);
  const { aud, sub, ...rest } = claims;
  return new SignJWT(rest)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(deps.config.baseUrl)
    .setAudience(aud)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(`${lifetimeSeconds}s`)
    .sign(key.privateKey);
}

async function loadOrCreate(deps: KeyDeps): Promise<SigningKey> {
  const [row] = await activeSigningKeys(deps.sql);
  if (row) return open(deps, row);
  // Inside a caller's transaction the lock is taken there; otherwise in a transaction of our own.
  return 'begin' in deps.sql ? deps.sql.begin((tx) => create(deps, tx)) : create(deps, deps.sql);
}

async function create(deps: KeyDeps, tx: Tx): Promise<SigningKey> {
  await lockSigningKeys(tx);
  // Another process may have created it while we waited for the lock.
  const [existing] = await activeSigningKeys(tx);
  if (existing) return open(deps, existing);
  const kid = newId('key').slice(4).toLowerCase();
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
  await insertSigningKey(tx, {
    kid,
    alg: SIGNING_ALG,
    public_jwk: { kty: 'EC', crv: String(publicJwk.crv), x: String(publicJwk.x), y: String(publicJwk.y) },
    private_jwk_enc: deps.keyring.encrypt(JSON.stringify(privateJwk), kid),
  });
  return { kid, alg: SIGNING_ALG, privateKey: privateKey as CryptoKey, publicJwk };
}

async function open(deps: KeyDeps, row: SigningKeyRow): Promise<SigningKey> {
  const jwk = JSON.parse(deps.keyring.decrypt(row.private_jwk_enc, row.kid)) as JWK;
  const privateKey = (await importJWK(jwk, SIGNING_ALG)) as CryptoKey;
  return { kid: row.kid, alg: SIGNING_ALG, privateKey, publicJwk: publicOf(row) };
}

function publicOf(row: SigningKeyRow): JWK {
  const { kty, crv, x, y } = row.public_jwk;
  return { kty, crv, x, y, kid: row.kid, alg: row.alg, use: 'sig' };
}
