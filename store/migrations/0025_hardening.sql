-- An e-mail address is unique within an organization, not across them: refusing an address
-- because another organization uses it would tell an admin who is a customer elsewhere. Password
-- sign-in finds the account among those with the address by its password (identity/manage.ts);
-- single sign-on looks only inside the organization whose provider answered.
drop index users_email_key;
create unique index users_email_key on users (org_id, lower(email)) where deleted_at is null;
create index users_email_idx on users (lower(email)) where deleted_at is null;

-- When a failure counter last moved: sign-in spaces attempts on an account out by a backoff
-- from the last failure instead of locking it (identity/throttle.ts).
alter table rate_limits add column last_hit_at timestamptz;
