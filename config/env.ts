import * as v from 'valibot';
import { type AllowEntry, parseAllowList } from './outbound-allow.ts';

/** Every environment variable the service reads, with its default. The README's table mirrors this. */
export interface Config {
  /** PostgreSQL URL of the service's own store; unset in dev mode means embedded PGlite. */
  databaseUrl: string | null;
  /** Temporal frontend host:port; unset in dev mode means a local dev server. */
  temporalAddress: string | null;
  temporalNamespace: string;
  temporalTaskQueue: string;
  /** The `temporal` CLI used by dev mode when TEMPORAL_ADDRESS is unset. */
  temporalCliPath: string | null;
  /** Base URL of the Temporal UI, for links to runs. */
  temporalUiUrl: string | null;
  host: string;
  port: number;
  /** Public base URL: issuer, metadata and every absolute link are built from it. */
  baseUrl: string;
  /** How other Countersign processes reach this one (agent relay); defaults to baseUrl. */
  internalUrl: string;
  /** Where dev mode keeps PGlite, the generated encryption key and the Temporal dev database. */
  dataDir: string;
  /** Base64 of 32 bytes: the current AES-256-GCM key for secrets at rest. */
  encryptionKey: string | null;
  /** Comma-separated base64 keys still accepted for decryption after a rotation. */
  encryptionOldKeys: string[];
  /** First start with an empty store: the first super admin and API key (automated deployments). */
  adminEmail: string | null;
  adminPassword: string | null;
  firstApiKey: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Base URL of the Slack-compatible Web API for chat steps (ends with `/`). */
  chatApiUrl: string;
  /** Bot token for chat steps; chat steps fail without it. */
  chatBotToken: string | null;
  /** GraphQL endpoint of the Linear-compatible tracker (label lookups). */
  trackerApiUrl: string;
  /** Tracker API key; with TRACKER_WEBHOOK_SECRET it makes the tracker integration configured. */
  trackerApiKey: string | null;
  /** Secret the tracker signs webhooks with (HMAC-SHA256, header `linear-signature`). */
  trackerWebhookSecret: string | null;
  /** OAuth authorization server lifetimes (api/oauth/README.md). */
  oauth: OAuthLifetimes;
  /** Failure limits of sign-in and the token endpoint. */
  rateLimits: {
    windowSeconds: number;
    accountFailures: number;
    addressFailures: number;
    /** Dynamic client registrations one address (an IPv6 /64) may make per 10 minutes. */
    registrationsPerAddress: number;
  };
  /**
   * Reverse proxies in front of the API that append to X-Forwarded-For: the client address is
   * the entry this many places from the right. 0 trusts no header (the socket's peer).
   */
  trustedProxies: number;
  /** Client ID Metadata Document fetching (api/oauth/README.md, "Client ID Metadata Documents"). */
  cimd: CimdConfig;
  /**
   * Outgoing mail (invitations, password resets, review requests): SMTP_URL and SMTP_FROM,
   * both or neither; null sends no mail and the pages show links to pass on by hand.
   */
  smtp: { url: string; from: string } | null;
  /** Metadata documents one client address may make the server fetch per 10 minutes. */
  cimdFetchesPerAddress: number;
  /** The outbound network policy's exceptions (COUNTERSIGN_OUTBOUND_ALLOW; core/outbound/policy.ts). */
  outboundAllow: AllowEntry[];
  /** How `serve` stops on SIGTERM/SIGINT (api/drain.ts). */
  shutdown: { delaySeconds: number; graceSeconds: number };
  /** The worker's health and metrics port; null: none. */
  workerHttpPort: number | null;
  /** Temporal worker versioning (worker/versioning.ts). */
  workerVersioning: WorkerVersioningConfig;
}

/**
 * Which Worker Deployment Version runs a run. `auto`: versioned, and a worker makes its version
 * the deployment's current one at start unless a newer one is current; `manual`: versioned, the
 * current version changes only by `countersign worker promote` (or when none is current); `off`:
 * unversioned workers and starts, for a cluster without worker deployments.
 */
export interface WorkerVersioningConfig {
  mode: 'auto' | 'manual' | 'off';
  deploymentName: string;
  /** COUNTERSIGN_BUILD_ID; null: the release's own (core/build-id.ts). */
  buildId: string | null;
}

/** What the CIMD fetcher may reach beyond the public internet; production leaves both empty. */
export interface CimdConfig {
  /**
   * Hosts exempt from the address refusal for metadata documents only (tests: `localhost:PORT`);
   * an entry with a port also lifts the port-443 rule for that port.
   */
  allowHosts: AllowEntry[];
  /** A PEM file of extra certificate authorities the fetcher trusts beside the public roots. */
  caFile: string | null;
}

/** Seconds each OAuth artifact lives; the refresh grace covers a client's parallel refreshes. */
export interface OAuthLifetimes {
  /** How long a person's consent to a client at one redirect URI is remembered. */
  consentSeconds: number;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  refreshGraceSeconds: number;
  codeSeconds: number;
}

const seconds = (fallback: string) =>
  v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number of seconds'), v.transform(Number)),
    fallback,
  );

const optionalString = v.optional(v.pipe(v.string(), v.trim()), '');

const count = (fallback: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(1, 'must be at least 1'),
    ),
    fallback,
  );

const EnvSchema = v.object({
  DATABASE_URL: v.optional(
    v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')),
  ),
  TEMPORAL_ADDRESS: v.optional(v.pipe(v.string(), v.regex(/^[^\s:]+:\d+$/, 'must be host:port'))),
  TEMPORAL_NAMESPACE: v.optional(v.pipe(v.string(), v.minLength(1)), 'default'),
  TEMPORAL_TASK_QUEUE: v.optional(v.pipe(v.string(), v.minLength(1)), 'countersign'),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_UI_URL: v.optional(v.pipe(v.string(), v.url('must be a URL'))),
  HOST: v.optional(v.string(), '127.0.0.1'),
  PORT: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a port number'),
      v.transform(Number),
      v.maxValue(65535, 'must be at most 65535'),
    ),
    '3000',
  ),
  BASE_URL: v.optional(v.pipe(v.string(), v.url('must be a URL such as https://countersign.example.com'))),
  COUNTERSIGN_INTERNAL_URL: v.optional(
    v.pipe(v.string(), v.url('must be a URL such as http://countersign-api-0.countersign:3000')),
  ),
  COUNTERSIGN_DATA_DIR: v.optional(v.string(), '.countersign'),
  COUNTERSIGN_ENCRYPTION_KEY: v.optional(
    v.pipe(
      v.string(),
      v.check((s) => decodedLength(s) === 32, 'must be the base64 encoding of exactly 32 bytes'),
    ),
  ),
  COUNTERSIGN_ENCRYPTION_OLD_KEYS: optionalString,
  COUNTERSIGN_ADMIN_EMAIL: v.optional(v.pipe(v.string(), v.email('must be an email address'))),
  COUNTERSIGN_ADMIN_PASSWORD: v.optional(
    v.pipe(v.string(), v.minLength(12, 'must be at least 12 characters')),
  ),
  COUNTERSIGN_API_KEY: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^cskey_[0-9A-HJKMNP-TV-Z]{26}_[A-Za-z0-9_-]{43}$/,
        'must have the shape printed by `countersign generate-api-key`',
      ),
    ),
  ),
  CHAT_API_URL: v.optional(
    v.pipe(v.string(), v.url('must be a URL such as https://slack.com/api/')),
    'https://slack.com/api/',
  ),
  CHAT_BOT_TOKEN: optionalString,
  TRACKER_API_URL: v.optional(v.pipe(v.string(), v.url('must be a URL')), 'https://api.linear.app/graphql'),
  TRACKER_API_KEY: optionalString,
  TRACKER_WEBHOOK_SECRET: optionalString,
  OAUTH_ACCESS_TOKEN_SECONDS: seconds('600'),
  OAUTH_REFRESH_TOKEN_SECONDS: seconds(String(30 * 24 * 3600)),
  OAUTH_REFRESH_GRACE_SECONDS: seconds('30'),
  OAUTH_CODE_SECONDS: seconds('120'),
  OAUTH_CONSENT_SECONDS: seconds(String(30 * 24 * 3600)),
  RATE_LIMIT_WINDOW_SECONDS: seconds('900'),
  RATE_LIMIT_ACCOUNT_FAILURES: count('10'),
  RATE_LIMIT_ADDRESS_FAILURES: count('50'),
  OAUTH_REGISTRATIONS_PER_ADDRESS: count('10'),
  TRUSTED_PROXIES: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number of proxies'), v.transform(Number)),
    '0',
  ),
  OAUTH_CIMD_ALLOW_HOSTS: optionalString,
  OAUTH_CIMD_CA_FILE: optionalString,
  COUNTERSIGN_OUTBOUND_ALLOW: optionalString,
  OAUTH_CIMD_FETCHES_PER_ADDRESS: count('30'),
  // Seconds between readiness failing and the listener closing; at least the keep-alive timeout (5 s).
  SHUTDOWN_DELAY_SECONDS: seconds('5'),
  SHUTDOWN_GRACE_SECONDS: seconds('25'),
  WORKER_HTTP_PORT: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a port number'),
      v.transform(Number),
      v.maxValue(65535, 'must be at most 65535'),
    ),
  ),
  WORKER_VERSIONING: v.optional(v.picklist(['auto', 'manual', 'off']), 'auto'),
  // Temporal joins deployment name and build id with a dot into the version string.
  TEMPORAL_DEPLOYMENT_NAME: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be letters, digits, - and _ only')),
    'countersign',
  ),
  COUNTERSIGN_BUILD_ID: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9._+-]{1,200}$/, 'must be letters, digits and . _ + - only')),
  ),
  SMTP_URL: v.optional(
    v.pipe(
      v.string(),
      v.check(
        isSmtpUrl,
        'must be an smtp:// or smtps:// URL such as smtps://user:password@mail.example.com:465',
      ),
    ),
  ),
  SMTP_FROM: v.optional(
    v.pipe(v.string(), v.email('must be the sender address, such as countersign@example.com')),
  ),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
});

function isSmtpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '';
  } catch {
    return false;
  }
}

function decodedLength(b64: string): number {
  return Buffer.from(b64, 'base64').length;
}

/** A configuration error names the variable and never echoes its value (it may be a secret). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses and checks the environment once at start. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = v.safeParse(EnvSchema, present);
  if (!parsed.success) {
    throw new ConfigError(parsed.issues.map((issue) => `${v.getDotPath(issue) ?? '?'}: ${issue.message}`));
  }
  const e = parsed.output;
  const problems: string[] = [];
  const oldKeys = e.COUNTERSIGN_ENCRYPTION_OLD_KEYS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (oldKeys.some((k) => decodedLength(k) !== 32)) {
    problems.push(
      'COUNTERSIGN_ENCRYPTION_OLD_KEYS: each key must be the base64 encoding of exactly 32 bytes',
    );
  }
  if ((e.COUNTERSIGN_ADMIN_EMAIL === undefined) !== (e.COUNTERSIGN_ADMIN_PASSWORD === undefined)) {
    problems.push('COUNTERSIGN_ADMIN_EMAIL and COUNTERSIGN_ADMIN_PASSWORD: set both or neither');
  }
  if ((e.SMTP_URL === undefined) !== (e.SMTP_FROM === undefined)) {
    problems.push('SMTP_URL and SMTP_FROM: set both (the server and the sender address) or neither');
  }
  const allowList = (variable: 'COUNTERSIGN_OUTBOUND_ALLOW' | 'OAUTH_CIMD_ALLOW_HOSTS'): AllowEntry[] => {
    try {
      return parseAllowList(e[variable], variable);
    } catch (err) {
      problems.push((err as Error).message);
      return [];
    }
  };
  const outboundAllow = allowList('COUNTERSIGN_OUTBOUND_ALLOW');
  const cimdAllow = allowList('OAUTH_CIMD_ALLOW_HOSTS');
  if (problems.length > 0) throw new ConfigError(problems);
  const port = e.PORT;
  const baseUrl = (e.BASE_URL ?? `http://${e.HOST === '0.0.0.0' ? '127.0.0.1' : e.HOST}:${port}`).replace(
    /\/+$/,
    '',
  );
  return {
    databaseUrl: e.DATABASE_URL ?? null,
    temporalAddress: e.TEMPORAL_ADDRESS ?? null,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    temporalTaskQueue: e.TEMPORAL_TASK_QUEUE,
    temporalCliPath: e.TEMPORAL_CLI_PATH || null,
    temporalUiUrl: e.TEMPORAL_UI_URL ?? null,
    host: e.HOST,
    port,
    baseUrl,
    internalUrl: (e.COUNTERSIGN_INTERNAL_URL ?? baseUrl).replace(/\/+$/, ''),
    dataDir: e.COUNTERSIGN_DATA_DIR,
    encryptionKey: e.COUNTERSIGN_ENCRYPTION_KEY ?? null,
    encryptionOldKeys: oldKeys,
    adminEmail: e.COUNTERSIGN_ADMIN_EMAIL ?? null,
    adminPassword: e.COUNTERSIGN_ADMIN_PASSWORD ?? null,
    firstApiKey: e.COUNTERSIGN_API_KEY ?? null,
    logLevel: e.LOG_LEVEL,
    // The Slack Web API client appends method names to this base: it must end with a slash.
    chatApiUrl: e.CHAT_API_URL.endsWith('/') ? e.CHAT_API_URL : `${e.CHAT_API_URL}/`,
    chatBotToken: e.CHAT_BOT_TOKEN || null,
    trackerApiUrl: e.TRACKER_API_URL,
    trackerApiKey: e.TRACKER_API_KEY || null,
    trackerWebhookSecret: e.TRACKER_WEBHOOK_SECRET || null,
    oauth: {
      accessTokenSeconds: e.OAUTH_ACCESS_TOKEN_SECONDS,
      refreshTokenSeconds: e.OAUTH_REFRESH_TOKEN_SECONDS,
      refreshGraceSeconds: e.OAUTH_REFRESH_GRACE_SECONDS,
      codeSeconds: e.OAUTH_CODE_SECONDS,
      consentSeconds: e.OAUTH_CONSENT_SECONDS,
    },
    rateLimits: {
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      accountFailures: e.RATE_LIMIT_ACCOUNT_FAILURES,
      addressFailures: e.RATE_LIMIT_ADDRESS_FAILURES,
      registrationsPerAddress: e.OAUTH_REGISTRATIONS_PER_ADDRESS,
    },
    trustedProxies: e.TRUSTED_PROXIES,
    smtp: e.SMTP_URL && e.SMTP_FROM ? { url: e.SMTP_URL, from: e.SMTP_FROM } : null,
    outboundAllow,
    cimdFetchesPerAddress: e.OAUTH_CIMD_FETCHES_PER_ADDRESS,
    cimd: {
      allowHosts: cimdAllow,
      caFile: e.OAUTH_CIMD_CA_FILE || null,
    },
    shutdown: { delaySeconds: e.SHUTDOWN_DELAY_SECONDS, graceSeconds: e.SHUTDOWN_GRACE_SECONDS },
    workerHttpPort: e.WORKER_HTTP_PORT ?? null,
    workerVersioning: {
      mode: e.WORKER_VERSIONING,
      deploymentName: e.TEMPORAL_DEPLOYMENT_NAME,
      buildId: e.COUNTERSIGN_BUILD_ID ?? null,
    },
  };
}
