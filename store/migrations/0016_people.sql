-- People managed in the service. A deleted person keeps their row (the audit log and
-- query requests name them), marked deleted and disabled; their address can be invited again.
alter table users add column deleted_at timestamptz;
drop index users_email_key;
create unique index users_email_key on users (lower(email)) where deleted_at is null;

-- One-time links to set a password (an invitation, or an admin's reset). The link holds the
-- secret; the row only its SHA-256 hash (store/secrets.ts).
create table password_setups (
  id text primary key,
  user_id text not null references users(id) on delete cascade,
  secret_hash text not null,
  created_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index password_setups_user_idx on password_setups (user_id);
