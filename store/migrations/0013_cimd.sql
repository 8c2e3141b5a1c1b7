-- Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization
-- 2025-11-25 "Client ID Metadata Documents"): a client whose client_id is an https URL gets a row
-- in oauth_clients keyed by that URL, so grants, codes, consents and the connected-clients list
-- reference it exactly as they reference a registered client. The row holds the last document that
-- passed validation and until when it may be used without fetching it again (HTTP caching, kept in
-- the store so every api replica shares it). A document that fails validation writes nothing.

alter table oauth_clients add column kind text not null default 'dcr'
  check (kind in ('dcr', 'cimd'));
-- When the document was last fetched and validated, and when that copy goes stale.
alter table oauth_clients add column metadata_fetched_at timestamptz;
alter table oauth_clients add column metadata_expires_at timestamptz;
alter table oauth_clients add constraint oauth_clients_cimd_fetched
  check ((kind = 'cimd') = (metadata_fetched_at is not null and metadata_expires_at is not null));
-- draft -01 §4.1: a metadata-document client cannot hold a shared secret; it is public.
alter table oauth_clients add constraint oauth_clients_cimd_public
  check (kind = 'dcr' or (token_endpoint_auth_method = 'none' and secret_hash is null));
