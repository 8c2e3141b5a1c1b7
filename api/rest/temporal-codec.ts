// The Temporal codec server contract (docs.temporal.io "Codec Server"): POST {base}/encode and
// {base}/decode with {"payloads": [{"metadata": {k: base64}, "data": base64}]}, answered in kind.
// The namespace comes as a path segment ({base}/{namespace}/decode) or the X-Namespace header.
// Mounted at /temporal/codec: the Temporal UI's TEMPORAL_CODEC_ENDPOINT and the CLI's
// --codec-endpoint name that URL.
import type { Payload } from '@temporalio/common';
import { type Context, Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { cors } from 'hono/cors';
import * as v from 'valibot';
import { decodeForReader, encodeForReader } from '../../automation/temporal-payloads.ts';
import type { Deps } from '../../core/deps.ts';
import { notFound } from '../../core/errors.ts';
import { serviceCodec } from '../../core/payload-codec.ts';
import { authenticatePersonalToken, authenticateSession } from '../../identity/authenticate.ts';
import type { UserPrincipal } from '../../identity/principal.ts';
import type { AppEnv } from '../env.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { fromOwnOrigin } from '../middleware/same-origin.ts';
import { jsonBody } from '../validate.ts';

const Base64 = v.pipe(
  v.string(),
  v.maxLength(2_000_000),
  v.regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
);
const Payloads = v.object({
  payloads: v.pipe(
    v.array(
      v.object({
        metadata: v.optional(v.record(v.string(), Base64), {}),
        data: v.optional(Base64, ''),
      }),
    ),
    v.maxLength(10_000),
  ),
});

export function temporalCodecRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const codec = serviceCodec(deps);
  const uiOrigin = deps.config.temporalUiUrl ? new URL(deps.config.temporalUiUrl).origin : null;
  // The Temporal UI calls from its own origin with the Countersign session cookie (its
  // TEMPORAL_CODEC_INCLUDE_CREDENTIALS), so exactly that origin may read the answers, with
  // credentials (Fetch standard: credentialed CORS names one origin, never `*`).
  app.use(
    '*',
    cors({
      origin: (origin) => (uiOrigin !== null && origin === uiOrigin ? origin : null),
      credentials: true,
      allowMethods: ['POST', 'OPTIONS'],
      allowHeaders: ['content-type', 'x-namespace', 'authorization'],
      maxAge: 600,
    }),
  );

  for (const op of ['encode', 'decode'] as const) {
    const handler = async (c: Context<AppEnv>) => {
      checkNamespace(deps, c.req.param('namespace') ?? c.req.header('x-namespace'));
      const reader = await codecReader(deps, c, uiOrigin);
      const body = await jsonBody(c, Payloads);
      const payloads = body.payloads.map(fromJson);
      const out =
        op === 'decode'
          ? await decodeForReader(deps, codec, reader, payloads)
          : encodeForReader(codec, reader, payloads);
      c.header('cache-control', 'no-store');
      return c.json({ payloads: out.map(toJson) });
    };
    app.post(`/${op}`, handler);
    app.post(`/:namespace/${op}`, handler);
  }
  return app;
}

/** The configured namespace only: another namespace's payloads were never sealed by this service. */
function checkNamespace(deps: Deps, namespace: string | undefined) {
  if (namespace !== undefined && namespace !== '' && namespace !== deps.config.temporalNamespace)
    throw notFound(`no codec for namespace ${namespace}`);
}

/**
 * A person: a personal access token (the CLI's --codec-auth "Bearer …"), or the session cookie of a
 * browser on our own site (the Temporal UI). A cookie rides along on any cross-site request, so a
 * cookie-authenticated call must come from our own pages or the configured Temporal UI origin
 * (OWASP CSRF cheat sheet, "Verifying Origin with standard headers").
 */
async function codecReader(deps: Deps, c: Context<AppEnv>, uiOrigin: string | null): Promise<UserPrincipal> {
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    const principal = m ? await authenticatePersonalToken(deps.sql, m[1]!) : null;
    if (!principal) throw unauthorized('the bearer token is invalid, expired or revoked');
    return principal;
  }
  const cookie = getCookie(c, c.get('sessionCookie'));
  if (cookie === undefined)
    throw unauthorized('credentials required: send an Authorization: Bearer token or a session cookie');
  const session = await authenticateSession(deps.sql, cookie);
  if (!session) throw unauthorized('the session has ended; sign in again');
  const origin = c.req.header('origin');
  if (!(origin !== undefined && origin === uiOrigin) && !fromOwnOrigin(c, deps.config.baseUrl))
    throw forbidden('a session-authenticated codec call must come from the Temporal UI or Countersign');
  return session.principal;
}

function fromJson(p: { metadata: Record<string, string>; data: string }): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, val] of Object.entries(p.metadata)) metadata[k] = Buffer.from(val, 'base64');
  return { metadata, data: Buffer.from(p.data, 'base64') };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [k, val] of Object.entries(p.metadata ?? {}))
    if (val) metadata[k] = Buffer.from(val).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? []).toString('base64') };
}
