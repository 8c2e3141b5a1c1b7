-- The role of a person whom single sign-on creates can come from a claim of the
-- identity provider (e.g. groups), mapped value by value to a role; the default role applies
-- when no value maps. Admins change roles later on the People page.
alter table sso_configs add column role_claim text;
alter table sso_configs add column role_map jsonb not null default '{}';
