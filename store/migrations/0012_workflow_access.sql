-- Who may start a workflow. The same element shape as an approval step's
-- `permissions` ({"user_id": "usr_…"} or {"role": "member"}); [] lets every person in the
-- organization start it, as before this column existed.
alter table workflows add column run_permissions jsonb not null default '[]';
