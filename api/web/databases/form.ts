// The database forms of the web UI send flat fields; this turns them into the very objects the
// REST API takes (SPEC.md 4.2), so one valibot schema validates both (registry/database-input.ts).
import { LARGE_WRITE_ROWS } from '../../../governance/preview/risk.ts';

/** A posted form: text fields, and uploaded files already read as text. */
export type Posted = Record<string, string>;

const DATABASE_TEXT = ['name', 'hostname', 'database', 'group', 'slack_channel', 'agent_id'] as const;
const DATABASE_FLAGS = [
  'ssl',
  'verify_server_hostname',
  'restrict_access',
  'review_bypass_allowed',
  'ai_enabled',
] as const;
const PEM_FILES = { ssl_ca_cert: 'ssl_ca_cert', ssl_cert: 'ssl_cert', ssl_key: 'ssl_key' } as const;

/** Credential slots on the registration form: the first is required, the second optional. */
export const NEW_CREDENTIAL_SLOTS = 2;

const on = (v: string | undefined) => v === 'on' || v === 'true' || v === '1';
const int = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : Number(v.trim()));
const text = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** PEM text as uploaded → the base64 the API takes; a field left empty stays out. */
function pem(v: string | undefined): string | undefined {
  return v && v.trim() !== '' ? Buffer.from(v, 'utf8').toString('base64') : undefined;
}

/**
 * The risk-level fields of a credential form (`risk_reviews.<level>.<field>`) → the API's
 * `risk_reviews` object. Every level named in the form goes to the schema, so a level the API
 * does not know is refused here exactly as there; a level whose approvals are left empty (and
 * no role picked) is left out: it needs the credential's own number.
 */
function riskReviewsFrom(form: Posted, prefix: string): Record<string, Record<string, unknown>> | undefined {
  const out: Record<string, Record<string, unknown>> = {};
  const pattern = new RegExp(`^${prefix}risk_reviews\\.(\\w+)\\.(reviews_required|approver_role)$`);
  // A form without the risk fields leaves the stored levels as they are.
  if (!Object.keys(form).some((k) => pattern.test(k))) return undefined;
  for (const [key, value] of Object.entries(form)) {
    const m = pattern.exec(key);
    if (!m || value.trim() === '') continue;
    const level = out[m[1]!] ?? {};
    out[m[1]!] = level;
    level[m[2]!] = m[2] === 'reviews_required' ? int(value) : value.trim();
  }
  return out;
}

function credentialFrom(form: Posted, prefix: string, isDefault: boolean): Record<string, unknown> {
  // A field left empty is left out, as a JSON body leaves it out: the same field error either way.
  const username = text(form[`${prefix}username`]);
  const out: Record<string, unknown> = {
    ...(username === undefined ? {} : { username }),
    password: form[`${prefix}password`] ?? '',
    hostname: text(form[`${prefix}hostname`]) ?? null,
    reviews_required: int(form[`${prefix}reviews_required`]) ?? 0,
    ai_allowed: on(form[`${prefix}ai_allowed`]),
    restrict_access: on(form[`${prefix}restrict_access`]),
    timeout: int(form[`${prefix}timeout`]) ?? null,
    default_credential: isDefault,
    ...(form[`${prefix}large_write_rows`] !== undefined
      ? { large_write_rows: int(form[`${prefix}large_write_rows`]) ?? LARGE_WRITE_ROWS }
      : {}),
  };
  const risk = riskReviewsFrom(form, prefix);
  if (risk !== undefined) out.risk_reviews = risk;
  return out;
}

function databaseFields(form: Posted, forPatch: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of DATABASE_TEXT) {
    const v = text(form[k]);
    if (v !== undefined) out[k] = v;
    else if (forPatch && ['group', 'slack_channel', 'agent_id'].includes(k)) out[k] = null;
  }
  if (form.adapter) out.adapter = form.adapter;
  for (const k of DATABASE_FLAGS) out[k] = on(form[k]);
  const port = int(form.port);
  if (port !== undefined) out.port = port;
  const cap = int(form.ai_max_rows);
  if (cap !== undefined) out.ai_max_rows = cap;
  for (const [field, file] of Object.entries(PEM_FILES)) {
    const v = pem(form[file]);
    if (v !== undefined) out[field] = v;
    // An explicit "remove" box clears a stored certificate on edit.
    else if (forPatch && on(form[`clear_${field}`])) out[field] = null;
  }
  return out;
}

/** The registration form → a CreateDatabase body (credential slots left blank are skipped). */
export function createBodyFromForm(form: Posted): Record<string, unknown> {
  const defaultSlot = form.default_credential ?? '0';
  const credentials: Record<string, unknown>[] = [];
  for (let i = 0; i < NEW_CREDENTIAL_SLOTS; i++) {
    const prefix = `c${i}_`;
    if (i > 0 && text(form[`${prefix}username`]) === undefined) continue;
    credentials.push(credentialFrom(form, prefix, defaultSlot === String(i)));
  }
  return { ...databaseFields(form, false), credentials };
}

/** The settings form of a registered database → a PatchDatabase body (credentials untouched). */
export function patchBodyFromForm(form: Posted): Record<string, unknown> {
  return databaseFields(form, true);
}

/** One credential's edit form → the PATCH `credentials` entry (a blank password keeps the old one). */
export function credentialPatchFromForm(form: Posted, id: string | null): Record<string, unknown> {
  const c = credentialFrom(form, '', on(form.default_credential));
  if (c.password === '') delete c.password;
  if (id === null) return c;
  // On edit the default flag is only ever set here, never cleared: another credential takes it.
  if (!on(form.default_credential)) delete c.default_credential;
  return { id, ...c };
}

/**
 * Where a validation error shows on the form: `credentials.1.username` is field `c1_username`
 * on the registration form, `credentials.0.password` is `password` on a credential form.
 */
export function fieldOf(path: string, credentialForm = false): string {
  const m = /^credentials\.(\d+)\.([\w.]+)$/.exec(path);
  if (m) return credentialForm ? m[2]! : `c${m[1]}_${m[2]}`;
  return path;
}
