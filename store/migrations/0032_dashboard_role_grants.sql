-- A restricted dashboard shared with a role (SPEC.md 2.3 restricted_access): everyone holding the
-- role sees it, as well as the people of dashboard_grants. Deleting the dashboard removes the grant.
create table dashboard_role_grants (
  dashboard_id text not null references dashboards(id) on delete cascade,
  role text not null check (role in ('admin', 'member')),
  granted_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (dashboard_id, role)
);
