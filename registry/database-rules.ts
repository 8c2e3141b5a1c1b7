import type { FieldError } from '../core/errors.ts';
import { validationFailed } from '../core/errors.ts';
import { LARGE_WRITE_ROWS } from '../governance/preview/risk.ts';
import {
  CREDENTIAL_SETTINGS,
  type CredentialRow,
  type DatabaseFields,
  DEFAULT_UNDO_MAX_ROWS,
} from '../store/databases.ts';
import type { PatchDatabaseInput } from './database-input.ts';

// Rules of a database's credential set, checked on the final state before anything is written.

/** A credential as it will be stored, with its password still in the clear (encrypted on insert). */
export type NewCredential = Omit<
  CredentialRow,
  'id' | 'database_id' | 'password_enc' | 'created_at' | 'updated_at'
> & {
  password: string;
};

type CredentialPatch = PatchDatabaseInput['credentials'] extends (infer T)[] | undefined ? T : never;

/** Turns a PATCH `credentials` list into deletes, updates and creates, and the resulting set. */
export function planCredentials(existing: CredentialRow[], patches: CredentialPatch[], errors: FieldError[]) {
  const byId = new Map(existing.map((c) => [c.id, c]));
  const final = new Map<string, { username: string; default_credential: boolean }>(
    existing.map((c) => [c.id, c]),
  );
  const deletes: string[] = [];
  const updates: Array<{ id: string; fields: Partial<NewCredential> }> = [];
  const creates: NewCredential[] = [];
  for (const [i, p] of patches.entries()) {
    const path = `credentials.${i}`;
    if (p.id !== undefined) {
      if (!byId.has(p.id)) {
        errors.push({ path: `${path}.id`, message: 'no such credential on this database' });
        continue;
      }
      if (p.delete) {
        final.delete(p.id);
        deletes.push(p.id);
        continue;
      }
      const fields: Partial<NewCredential> = {};
      // The password arrives in the clear and is stored encrypted (password_enc).
      for (const key of ['username', 'password', ...CREDENTIAL_SETTINGS] as const) {
        if (p[key] !== undefined) Object.assign(fields, { [key]: p[key] });
      }
      updates.push({ id: p.id, fields });
      final.set(p.id, { ...final.get(p.id)!, ...fields } as {
        username: string;
        default_credential: boolean;
      });
      continue;
    }
    if (p.delete) {
      errors.push({ path: `${path}.delete`, message: 'needs the id of the credential to delete' });
      continue;
    }
    if (p.username === undefined)
      errors.push({ path: `${path}.username`, message: 'is required for a new credential' });
    if (p.password === undefined)
      errors.push({ path: `${path}.password`, message: 'is required for a new credential' });
    if (p.username === undefined || p.password === undefined) continue;
    const created: NewCredential = {
      username: p.username,
      password: p.password,
      hostname: p.hostname ?? null,
      ai_allowed: p.ai_allowed ?? false,
      timeout: p.timeout ?? null,
      reviews_required: p.reviews_required ?? 0,
      default_credential: p.default_credential ?? false,
      restrict_access: p.restrict_access ?? false,
      justification_required: p.justification_required ?? false,
      large_write_rows: p.large_write_rows ?? LARGE_WRITE_ROWS,
      risk_reviews: p.risk_reviews ?? {},
      undo_max_rows: p.undo_max_rows ?? DEFAULT_UNDO_MAX_ROWS,
    };
    creates.push(created);
    final.set(`new:${i}`, created);
  }
  // A new default replaces the old one unless the old one was explicitly kept as default.
  const newDefault =
    [...updates.filter((u) => u.fields.default_credential), ...creates.filter((c) => c.default_credential)]
      .length > 0;
  if (newDefault) {
    for (const c of existing) {
      const explicit = updates.find((u) => u.id === c.id && u.fields.default_credential !== undefined);
      if (c.default_credential && !explicit && final.has(c.id)) {
        updates.push({ id: c.id, fields: { default_credential: false } });
        final.set(c.id, { ...final.get(c.id)!, default_credential: false });
      }
    }
  }
  return { final: [...final.values()], deletes, updates, creates };
}

/** Rules that span fields; each failure names its field (422, nothing written). */
export function checkInvariants(
  db: Pick<DatabaseFields, 'verify_server_hostname' | 'ssl_ca_cert' | 'ssl_client_cert'>,
  creds: Array<{ username: string; default_credential: boolean }>,
  clientKey: string | null,
  errors: FieldError[] = [],
): void {
  // SPEC.md 2.2: verify_server_hostname requires a CA certificate.
  if (db.verify_server_hostname && !db.ssl_ca_cert) {
    errors.push({ path: 'verify_server_hostname', message: 'requires a CA certificate (ssl_ca_cert)' });
  }
  if ((db.ssl_client_cert === null) !== (clientKey === null)) {
    errors.push({
      path: db.ssl_client_cert === null ? 'ssl_cert' : 'ssl_key',
      message: 'a client certificate and its key go together',
    });
  }
  if (creds.length === 0)
    errors.push({ path: 'credentials', message: 'at least one credential is required' });
  if (creds.filter((c) => c.default_credential).length > 1) {
    errors.push({ path: 'credentials', message: 'only one credential can be the default' });
  }
  const seen = new Set<string>();
  creds.forEach((c, i) => {
    if (seen.has(c.username))
      errors.push({ path: `credentials.${i}.username`, message: `duplicate username ${c.username}` });
    seen.add(c.username);
  });
  if (errors.length > 0) throw validationFailed(errors);
}

/**
 * A credential's name and settings, never its password: what the API shows of it and what its
 * audit record compares, in one list (store/databases.ts CREDENTIAL_SETTINGS).
 */
export function credentialSettings(
  c: Pick<CredentialRow, 'username' | (typeof CREDENTIAL_SETTINGS)[number]>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { username: c.username };
  for (const key of CREDENTIAL_SETTINGS) out[key] = c[key];
  return out;
}
