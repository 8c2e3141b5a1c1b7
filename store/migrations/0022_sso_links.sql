-- Single sign-on reaches an existing account only through a link: made when SSO created the
-- account, when the person confirmed with their password, or when the provider marked the email
-- verified and it is in one of the organization's own domains. A provider an admin points the
-- organization at can then assert anyone's email and still not sign in as them.
create table sso_links (
  org_id text not null references organizations(id) on delete cascade,
  issuer text not null,
  subject text not null,
  user_id text not null references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (org_id, issuer, subject)
);
create index sso_links_user_idx on sso_links (user_id);

-- Email domains the organization owns (lower-case host names): a verified email in one of them
-- links an existing account at its first SSO sign-in.
alter table sso_configs add column domains text[] not null default '{}';

-- A password link issued through an organization API key works only while that key does: the
-- link carries the authority of whoever issued it (as created_by does for a person).
alter table password_setups add column created_by_key text references api_keys(id) on delete cascade;
