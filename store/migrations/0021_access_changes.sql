-- Every process keeps access decisions in memory (store/access-cache.ts) and empties
-- them when any row they were read from changes. These triggers say so: one NOTIFY per statement
-- on a table the access reads join, sent when the transaction commits (PostgreSQL folds
-- identical notifications of one transaction into one, and drops them on rollback).
create function access_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('countersign_access', '');
  return null;
end $$;

do $$
declare
  t text;
begin
  foreach t in array array[
    'organizations', 'users', 'oauth_clients', 'ai_client_controls', 'databases', 'credentials',
    'database_grants', 'credential_grants', 'data_protection_policies', 'data_protection_rules',
    'data_protection_assignments'
  ] loop
    execute format(
      'create trigger %I after insert or update or delete or truncate on %I
         for each statement execute function access_changed()',
      t || '_access_changed', t);
  end loop;
end $$;

-- A grant's last use is written once a minute while a client works; that changes no decision.
create trigger oauth_grants_access_changed
  after insert or delete or truncate or update of client_id, user_id, scope, resource, revoked_at
  on oauth_grants for each statement execute function access_changed();
