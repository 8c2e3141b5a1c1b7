import type { Tx } from './db.ts';

/** The service's signing key: the public JWK in clear, the private JWK sealed (bound to `kid`). */
export interface SigningKeyRow {
  kid: string;
  alg: string;
  public_jwk: Record<string, string>;
  private_jwk_enc: string;
  created_at: Date;
  retired_at: Date | null;
}

/** Keys still published, newest first: the first one signs. */
export async function activeSigningKeys(sql: Tx): Promise<SigningKeyRow[]> {
  return sql<
    SigningKeyRow[]
  >`select * from signing_keys where retired_at is null order by created_at desc, kid desc`;
}

export async function insertSigningKey(
  sql: Tx,
  row: Pick<SigningKeyRow, 'kid' | 'alg' | 'public_jwk' | 'private_jwk_enc'>,
): Promise<void> {
  await sql`
    insert into signing_keys (kid, alg, public_jwk, private_jwk_enc)
    values (${row.kid}, ${row.alg}, ${sql.json(row.public_jwk)}, ${row.private_jwk_enc})`;
}

/** Serializes key creation across api and worker processes (any fixed number). */
export async function lockSigningKeys(sql: Tx): Promise<void> {
  await sql`select pg_advisory_xact_lock(${0x6a776b73})`;
}
