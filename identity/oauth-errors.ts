// OAuth errors, one class per `error` code (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2;
// RFC 8707 §2; RFC 6750 §3.1; RFC 7009 §2.2.1). `description` goes on the wire and is written for
// the client; `reason` is the internal detail, logged only. api/oauth/errors.ts renders them.

export abstract class OAuthError extends Error {
  abstract readonly error: string;
  readonly status: 400 | 401 | 403 = 400;
  constructor(
    readonly description: string,
    readonly reason: string = description,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
}
/** RFC 6749 §5.2: 401, with `WWW-Authenticate` when the client tried HTTP Basic. */
export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  override readonly status = 401;
}
export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
}
export class UnauthorizedClient extends OAuthError {
  readonly error = 'unauthorized_client';
}
export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
}
export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
}
export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
}
/** RFC 8707 §2: the requested resource is not one this server issues tokens for. */
export class InvalidTarget extends OAuthError {
  readonly error = 'invalid_target';
}
export class AccessDenied extends OAuthError {
  readonly error = 'access_denied';
}
export class InvalidRedirectUri extends OAuthError {
  readonly error = 'invalid_redirect_uri';
}
export class InvalidClientMetadata extends OAuthError {
  readonly error = 'invalid_client_metadata';
}
/** RFC 7009 §2.2.1. */
export class UnsupportedTokenType extends OAuthError {
  readonly error = 'unsupported_token_type';
}
/** RFC 6750 §3.1: resource-server errors, sent in `WWW-Authenticate`. */
export class InvalidToken extends OAuthError {
  readonly error = 'invalid_token';
  override readonly status = 401;
}
export class InsufficientScope extends OAuthError {
  readonly error = 'insufficient_scope';
  override readonly status = 403;
}
