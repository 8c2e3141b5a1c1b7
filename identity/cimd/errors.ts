/**
 * A client ID metadata document that cannot be used (draft-ietf-oauth-client-id-metadata-document-01
 * §4.3). `why` completes "The application's metadata document …" for the person at the
 * authorization endpoint; `reason` is logged only. Neither holds a secret.
 */
export class CimdRefused extends Error {
  constructor(
    readonly why: string,
    readonly reason: string = why,
  ) {
    super(why);
    this.name = 'CimdRefused';
  }
}
