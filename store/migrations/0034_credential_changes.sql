-- Signing in with an API key, a personal token or a session cookie reads the credential's row and
-- its person's through the access cache (identity/authenticate.ts, store/access-cache.ts), so
-- these tables notify their changes like those of 0021: a revoked key, token or session is
-- refused on the very next request. The last-use stamp (written once a minute while a credential
-- works) decides nothing and is left out; a column added to one of these tables must be listed.
create trigger api_keys_access_changed
  after insert or delete or truncate
    or update of id, org_id, name, secret_hash, created_by, created_at, revoked_at, owner_user_id, act_as_allowed
  on api_keys for each statement execute function access_changed();

create trigger personal_tokens_access_changed
  after insert or delete or truncate
    or update of id, user_id, name, secret_hash, expires_at, created_at, revoked_at
  on personal_tokens for each statement execute function access_changed();

create trigger sessions_access_changed
  after insert or update or delete or truncate
  on sessions for each statement execute function access_changed();
