-- The audit log records more than queries — changes of who may do what
-- (people, roles, grants) and AI tool calls that are not queries — each as its own kind of
-- event with a structured subject, in the same hash chain. Existing entries are 'query' events;
-- their hashes do not change, because a query entry's hashed body leaves both columns out.
alter table audit_log add column event text not null default 'query';
alter table audit_log add column subject jsonb;
create index audit_log_org_event_idx on audit_log (org_id, event, seq);
