-- A key never acts above a person: every live key has an owner, whose identity it carries
-- (role, grants, data-protection policy) and with whom it dies (identity/authenticate.ts).
-- The owner is a person or a service account: a users row that cannot sign in, with its own
-- role (never super_admin), grants and policy assignments through the ordinary user_id tables.
alter table users add column service_account boolean not null default false;
alter table users add constraint users_service_account_role
  check (not service_account or role in ('admin', 'member'));

alter table api_keys add column owner_user_id text references users(id) on delete cascade;
-- x-act-as-user is refused unless a super admin person marked the key for it.
alter table api_keys add column act_as_allowed boolean not null default false;
create index api_keys_owner_idx on api_keys (owner_user_id);

-- Keys made before owners existed: the creator, a person of the key's organization, owns the key
-- (so it keeps working with exactly the creator's access, and stops with them). A key nobody is
-- known to have created (made by the CLI, or its creator's row is gone) is revoked rather than
-- turned into a member service account: a member still sees every unrestricted database and may
-- submit queries, which is access nobody chose for it, while a refused key fails loudly (401)
-- and an admin makes a new one with a deliberate owner.
update api_keys k set owner_user_id = k.created_by
  from users u where u.id = k.created_by and u.org_id = k.org_id and not u.service_account;
update api_keys set revoked_at = now() where owner_user_id is null and revoked_at is null;
alter table api_keys add constraint api_keys_live_has_owner
  check (owner_user_id is not null or revoked_at is not null);
