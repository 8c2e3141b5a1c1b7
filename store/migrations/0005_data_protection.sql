-- Data-protection policies (DESIGN.md pipeline step 5). A policy belongs to one
-- database and lists column rules; it is assigned to users and to roles. A user's own
-- assignment wins over their role's. A column no rule names is hidden (default deny).

create table data_protection_policies (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  database_id text not null references databases(id) on delete cascade,
  name text not null,
  description text not null default '',
  -- Mixed into every hashed value so a hash cannot be checked against a guess computed
  -- elsewhere (md5('alice@example.com')); it never leaves the service in a response.
  hash_salt text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (database_id, name)
);
create index data_protection_policies_db_idx on data_protection_policies (database_id, id);

create table data_protection_rules (
  policy_id text not null references data_protection_policies(id) on delete cascade,
  position integer not null,
  -- null: the table of that name in any schema.
  schema_name text,
  table_name text not null,
  -- '*': every column of the table that no rule of its own names.
  column_name text not null,
  action text not null check (action in ('show', 'hide', 'mask', 'hash', 'partial')),
  keep_first integer not null default 0 check (keep_first between 0 and 64),
  keep_last integer not null default 0 check (keep_last between 0 and 64),
  primary key (policy_id, position)
);
create unique index data_protection_rules_column_key
  on data_protection_rules (policy_id, coalesce(schema_name, ''), table_name, column_name);

-- Exactly one of user_id and role. One policy per user and per role on a database.
create table data_protection_assignments (
  policy_id text not null references data_protection_policies(id) on delete cascade,
  database_id text not null references databases(id) on delete cascade,
  user_id text references users(id) on delete cascade,
  role text check (role in ('super_admin', 'admin', 'member')),
  created_at timestamptz not null default now(),
  check ((user_id is null) <> (role is null))
);
create unique index data_protection_assignments_user_key
  on data_protection_assignments (database_id, user_id) where user_id is not null;
create unique index data_protection_assignments_role_key
  on data_protection_assignments (database_id, role) where role is not null;
create index data_protection_assignments_policy_idx on data_protection_assignments (policy_id);
