// Keys made before keys had owners: on migration, a key whose creator is a person of its
// organization becomes theirs (same access as the creator, dies with them); a key nobody is known
// to have made is revoked, never left acting for the whole organization nor guessed an owner.
import { describe, expect, it } from 'vitest';
import { authenticateApiKey } from '../../identity/authenticate.ts';
import { openStore } from '../../store/db.ts';
import { newId } from '../../store/ids.ts';
import { loadMigrations, migrate } from '../../store/migrate.ts';
import { hashSecret, mintSecret } from '../../store/secrets.ts';
import { createTestStore } from '../harness/store.ts';

describe('the key-owner migration', () => {
  it('gives a key to its known creator and revokes a key without one', async () => {
    const store = await createTestStore();
    const sql = openStore(store.url, { max: 1 });
    try {
      const all = await loadMigrations();
      const ours = all.find((m) => m.name === 'api_key_owners')!;
      await migrate(
        sql,
        all.filter((m) => m.version < ours.version),
      );
      const org = newId('org');
      const other = newId('org');
      await sql`insert into organizations (id, name) values (${org}, 'o'), (${other}, 'x')`;
      const admin = newId('usr');
      const stranger = newId('usr');
      await sql`insert into users (id, org_id, email, role) values
        (${admin}, ${org}, 'admin@example.test', 'admin'),
        (${stranger}, ${other}, 'stranger@example.test', 'super_admin')`;
      const key = async (createdBy: string | null) => {
        const id = newId('key');
        const { secret } = mintSecret('cskey', id);
        await sql`insert into api_keys (id, org_id, name, secret_hash, created_by)
          values (${id}, ${org}, 'old', ${hashSecret(secret)}, ${createdBy})`;
        return { id, secret };
      };
      const byAdmin = await key(admin);
      const byNobody = await key(null);
      const byStranger = await key(stranger);

      expect(await migrate(sql, all)).toEqual(
        all.filter((m) => m.version >= ours.version).map((m) => m.version),
      );

      const rows = await sql<{ id: string; owner_user_id: string | null; revoked: boolean }[]>`
        select id, owner_user_id, revoked_at is not null as revoked from api_keys order by id`;
      const by = Object.fromEntries(rows.map((r) => [r.id, r]));
      expect(by[byAdmin.id]).toMatchObject({ owner_user_id: admin, revoked: false });
      expect(by[byNobody.id]).toMatchObject({ owner_user_id: null, revoked: true });
      // A creator from another organization is no owner here.
      expect(by[byStranger.id]).toMatchObject({ owner_user_id: null, revoked: true });

      expect(await authenticateApiKey(sql, byAdmin.secret)).toMatchObject({
        principal: { userId: admin, role: 'admin', via: 'api_key', credentialId: byAdmin.id },
        actAsAllowed: false,
      });
      expect(await authenticateApiKey(sql, byNobody.secret)).toBeNull();
      expect(await authenticateApiKey(sql, byStranger.secret)).toBeNull();
    } finally {
      await sql.end();
      await store.drop();
    }
  });
});
