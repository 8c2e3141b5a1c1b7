import * as v from 'valibot';
import { ADAPTERS } from '../adapters/types.ts';

/** Base64 of a PEM block (SPEC.md 4.2 setup: ssl_ca_cert, ssl_cert, ssl_key). Decodes to the PEM text. */
export const Base64Pem = v.pipe(
  v.string(),
  v.check((s) => decodePem(s) !== null, 'must be a base64-encoded PEM certificate or key'),
  v.transform((s) => decodePem(s)!),
);

function decodePem(b64: string): string | null {
  const compact = b64.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return null;
  const text = Buffer.from(compact, 'base64').toString('utf8');
  return /-----BEGIN [A-Z0-9 ]+-----[\s\S]+-----END [A-Z0-9 ]+-----/.test(text) ? text : null;
}

const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200));
const Host = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(253));
const Port = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1), v.maxValue(65535));
const Adapter = v.picklist(ADAPTERS, `must be one of ${ADAPTERS.join(', ')}`);
const OptionalText = v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(200))));
const Timeout = v.nullable(
  v.pipe(v.number(), v.integer('must be a whole number of seconds'), v.minValue(1), v.maxValue(86_400)),
);
const Reviews = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(0, 'must be from 0 to 20'),
  v.maxValue(20, 'must be from 0 to 20'),
);

/** Approvals a risk level needs, and optionally the role its approvers must hold (governance/risk-rules.ts). */
const LevelReviews = v.strictObject(
  {
    reviews_required: Reviews,
    approver_role: v.optional(
      v.nullable(v.picklist(['admin', 'super_admin'], 'must be admin, super_admin or null')),
    ),
  },
  'must be an object with reviews_required and, optionally, approver_role',
);
/** Keyed by risk level; a level not named here needs the credential's reviews_required. */
const RiskReviews = v.strictObject(
  {
    ordinary: v.optional(LevelReviews),
    no_where: v.optional(LevelReviews),
    large: v.optional(LevelReviews),
    ddl: v.optional(LevelReviews),
  },
  'must be keyed by risk level: ordinary, no_where, large or ddl',
);
const LargeWriteRows = v.pipe(
  v.number(),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(1_000_000_000),
);

const CredentialCommon = {
  hostname: v.optional(v.nullable(Host)),
  ai_allowed: v.optional(v.boolean()),
  /** Only users and roles granted this credential may use it (…/credentials/:id/grants). */
  restrict_access: v.optional(v.boolean()),
  /** A query waiting for this credential's reviews must come with a justification. */
  justification_required: v.optional(v.boolean()),
  /** Rows of one approved write kept for undo at most (default 10 000; 0: never). */
  undo_max_rows: v.optional(
    v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(0), v.maxValue(1_000_000)),
  ),
  timeout: v.optional(Timeout),
  reviews_required: v.optional(Reviews),
  default_credential: v.optional(v.boolean()),
  /** A write whose preview counts more rows than this is `large`. Default 1000. */
  large_write_rows: v.optional(LargeWriteRows),
  /** Approvals per risk level, above reviews_required. Default {} (every level: reviews_required). */
  risk_reviews: v.optional(RiskReviews),
};

export const CreateCredential = v.object({
  username: Name,
  password: v.string('is required'),
  ...CredentialCommon,
});

/** PATCH: with `id` updates that credential, without creates one; `delete: true` removes it. */
export const PatchCredential = v.object({
  id: v.optional(v.string()),
  username: v.optional(Name),
  password: v.optional(v.string()),
  delete: v.optional(v.boolean()),
  ...CredentialCommon,
});

const DatabaseCommon = {
  port: v.optional(Port),
  ssl: v.optional(v.boolean()),
  verify_server_hostname: v.optional(v.boolean()),
  ssl_ca_cert: v.optional(v.nullable(Base64Pem)),
  ssl_cert: v.optional(v.nullable(Base64Pem)),
  ssl_key: v.optional(v.nullable(Base64Pem)),
  restrict_access: v.optional(v.boolean()),
  review_bypass_allowed: v.optional(v.boolean()),
  group: OptionalText,
  slack_channel: OptionalText,
  agent_id: OptionalText,
  ai_enabled: v.optional(v.boolean()),
  ai_max_rows: v.optional(
    v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1), v.maxValue(100_000)),
  ),
};

export const CreateDatabase = v.object({
  name: Name,
  adapter: Adapter,
  hostname: Host,
  database: Name,
  credentials: v.pipe(
    v.array(CreateCredential, 'must be an array'),
    v.minLength(1, 'at least one credential is required'),
  ),
  ...DatabaseCommon,
});
export type CreateDatabaseInput = v.InferOutput<typeof CreateDatabase>;

export const PatchDatabase = v.object({
  name: v.optional(Name),
  adapter: v.optional(Adapter),
  hostname: v.optional(Host),
  database: v.optional(Name),
  credentials: v.optional(v.array(PatchCredential, 'must be an array')),
  ...DatabaseCommon,
});
export type PatchDatabaseInput = v.InferOutput<typeof PatchDatabase>;

/** PUT /setup (SPEC.md 4.2): upsert by API id, one default credential. */
export const SetupDatabase = v.object({
  id: v.pipe(v.string('is required'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200)),
  adapter: Adapter,
  hostname: Host,
  database: Name,
  username: Name,
  password: v.string('is required'),
  name: v.optional(Name),
  port: v.optional(Port),
  group: OptionalText,
  agent_id: OptionalText,
  ssl: v.optional(v.string()),
  ssl_ca_cert: v.optional(v.nullable(Base64Pem)),
  ssl_key: v.optional(v.nullable(Base64Pem)),
  ssl_cert: v.optional(v.nullable(Base64Pem)),
  reviews_required: v.optional(Reviews, 0),
  review_bypass_allowed: v.optional(v.boolean(), false),
});
export type SetupDatabaseInput = v.InferOutput<typeof SetupDatabase>;

export const ListDatabases = v.object({
  group: v.optional(v.string()),
  after: v.optional(v.string()),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(200),
    ),
    '50',
  ),
});
