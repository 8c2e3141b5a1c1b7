import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { CreateDatabase, PatchDatabase } from '../../../registry/database-input.ts';
import { createBodyFromForm, credentialPatchFromForm, fieldOf, patchBodyFromForm } from './form.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('database forms become the REST bodies the same schema validates', () => {
  it('a registration form with two credentials, the second the default', () => {
    const body = createBodyFromForm({
      name: 'shop',
      adapter: 'postgres',
      hostname: 'db.internal',
      port: '5433',
      database: 'shop',
      ssl: 'on',
      ssl_ca_cert: PEM,
      ai_enabled: 'on',
      ai_max_rows: '50',
      c0_username: 'reader',
      c0_password: 'p1',
      c0_reviews_required: '0',
      c0_restrict_access: 'on',
      c1_username: 'writer',
      c1_password: 'p2',
      c1_reviews_required: '2',
      default_credential: '1',
    });
    const parsed = v.parse(CreateDatabase, body);
    expect(parsed).toMatchObject({ name: 'shop', port: 5433, ssl: true, ai_enabled: true, ai_max_rows: 50 });
    expect(parsed.ssl_ca_cert).toBe(PEM);
    expect(parsed.credentials).toEqual([
      expect.objectContaining({ username: 'reader', restrict_access: true, default_credential: false }),
      expect.objectContaining({ username: 'writer', reviews_required: 2, default_credential: true }),
    ]);
  });

  it('an empty second slot is skipped; a missing first username is reported on its field', () => {
    const body = createBodyFromForm({
      name: 'x',
      adapter: 'mysql',
      hostname: 'h',
      database: 'd',
      c0_password: 'p',
    });
    const out = v.safeParse(CreateDatabase, body);
    expect(out.success).toBe(false);
    const paths = out.issues!.map((i) => fieldOf(v.getDotPath(i) ?? ''));
    expect(paths).toContain('c0_username');
    expect((body.credentials as unknown[]).length).toBe(1);
  });

  it('the settings form clears optional text and a certificate only when asked', () => {
    const body = patchBodyFromForm({
      name: 'shop',
      hostname: 'h',
      database: 'd',
      group: '',
      clear_ssl_ca_cert: 'on',
    });
    expect(v.parse(PatchDatabase, body)).toMatchObject({ group: null, ssl_ca_cert: null, ssl: false });
    expect(patchBodyFromForm({ name: 'shop' })).not.toHaveProperty('ssl_cert');
  });

  it('a credential edit keeps the password when left blank', () => {
    expect(credentialPatchFromForm({ username: 'r', password: '', reviews_required: '1' }, 'crd_1')).toEqual({
      id: 'crd_1',
      username: 'r',
      hostname: null,
      reviews_required: 1,
      ai_allowed: false,
      restrict_access: false,
      timeout: null,
    });
    expect(fieldOf('credentials.0.password', true)).toBe('password');
  });

  it('the risk-level fields become risk_reviews; an empty level is left out; errors find their field', () => {
    const body = credentialPatchFromForm(
      {
        username: 'r',
        large_write_rows: '500',
        'risk_reviews.ddl.reviews_required': '2',
        'risk_reviews.ddl.approver_role': 'admin',
        'risk_reviews.large.reviews_required': '',
        'risk_reviews.large.approver_role': '',
      },
      'crd_1',
    );
    expect(body).toMatchObject({
      large_write_rows: 500,
      risk_reviews: { ddl: { reviews_required: 2, approver_role: 'admin' } },
    });
    expect(fieldOf('credentials.0.risk_reviews.ddl.approver_role', true)).toBe(
      'risk_reviews.ddl.approver_role',
    );
    expect(fieldOf('credentials.1.large_write_rows')).toBe('c1_large_write_rows');
  });
});
