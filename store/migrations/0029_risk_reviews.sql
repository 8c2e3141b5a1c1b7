-- Risk levels that drive reviews (governance/risk-rules.ts). A credential says above how many
-- previewed rows a write is large, and per level how many approvals it needs and, optionally,
-- which role its approvers must hold: {"ddl": {"reviews_required": 2, "approver_role": "admin"}}.
alter table credentials add column large_write_rows integer not null default 1000
  check (large_write_rows >= 1);
alter table credentials add column risk_reviews jsonb not null default '{}'::jsonb;

-- The level a request was assessed at (on submission and on each edit), why, and the role its
-- approvers must hold; reviews_required already holds the number that level requires.
alter table query_requests add column risk_level text
  check (risk_level in ('ddl', 'no_where', 'large', 'ordinary'));
alter table query_requests add column risk_why text;
alter table query_requests add column approver_role text
  check (approver_role in ('admin', 'super_admin'));
