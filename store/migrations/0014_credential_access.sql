-- A credential may be limited to named users and roles. Without it, everyone who can
-- see a database can use every credential of it, so an unreviewed credential (reviews_required 0)
-- beside a reviewed one would silently defeat the review.
alter table credentials add column restrict_access boolean not null default false;

create table credential_grants (
  id text primary key,
  credential_id text not null references credentials(id) on delete cascade,
  user_id text references users(id) on delete cascade,
  role text check (role in ('super_admin', 'admin', 'member')),
  granted_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  check ((user_id is null) <> (role is null))
);
create unique index credential_grants_user_key on credential_grants (credential_id, user_id) where user_id is not null;
create unique index credential_grants_role_key on credential_grants (credential_id, role) where role is not null;
