// An organization's SSO settings as PUT /api/v1/sso and the Organization page's form both send
// them (identity/sso.ts setSsoConfig stores them): one schema, one set of field errors.
import * as v from 'valibot';

/** The settings as setSsoConfig takes them, once parsed. */
export type SsoInputValue = v.InferOutput<typeof SsoInput>;

/** The settings of an organization's OpenID Connect sign-in. */
export const SsoInput = v.object({
  issuer: v.pipe(v.string(), v.url('must be the issuer URL of an OpenID provider')),
  client_id: v.pipe(v.string(), v.minLength(1), v.maxLength(500)),
  /**
   * Empty or absent keeps the stored secret: the settings page never shows it back. The first
   * settings of an organization need one (identity/sso.ts setSsoConfig says so by this field).
   */
  client_secret: v.optional(v.pipe(v.string(), v.maxLength(2000)), ''),
  provision_role: v.optional(v.nullable(v.picklist(['admin', 'member'])), null),
  /** A claim (e.g. `groups`) whose values pick a new account's role through `role_map`. */
  role_claim: v.optional(
    v.nullable(v.pipe(v.string(), v.trim(), v.regex(/^[\w.:-]{1,100}$/, 'must be a claim name'))),
    null,
  ),
  role_map: v.optional(
    v.record(
      v.pipe(v.string(), v.maxLength(200)),
      v.picklist(['admin', 'member'], 'must be admin or member'),
    ),
    {},
  ),
  /** Email domains the organization owns: a verified email in one links an existing account at SSO sign-in. */
  domains: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string(),
          v.trim(),
          v.toLowerCase(),
          v.regex(
            /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
            'must be a domain name',
          ),
        ),
      ),
      v.maxLength(50),
    ),
    [],
  ),
  enabled: v.optional(v.boolean(), true),
  /** The super admin's own password, entered again: SSO decides who signs in as whom. */
  current_password: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});
