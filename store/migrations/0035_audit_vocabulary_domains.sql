-- The audit log's four closed vocabularies (actor kind, origin, classification, outcome) as
-- domains instead of CHECK constraints on the table. The same values are refused, with the same
-- error (23514 check_violation), by every path that writes an entry. The difference is cost:
-- PostgreSQL rebuilds a table's CHECK expressions from the catalog text for every INSERT
-- statement that has to test them (ExecRelCheck), while a domain's constraints are kept ready in
-- the type cache. Every governed query appends an entry, and on one backend that rebuilding was
-- about a fifth of the CPU of a single-entry append.
create domain audit_actor_kind as text;
create domain audit_origin as text;
create domain audit_classification as text;
create domain audit_outcome as text;

-- Changing text to a domain without constraints does not rewrite the table; the constraints come
-- after. They are NOT VALID because every stored row already passed the table checks they
-- replace, so a scan of the whole log at upgrade would find nothing. New rows are checked.
alter table audit_log
  drop constraint audit_log_actor_kind_check,
  drop constraint audit_log_origin_check,
  drop constraint audit_log_classification_check,
  drop constraint audit_log_outcome_check,
  alter column actor_kind type audit_actor_kind,
  alter column origin type audit_origin,
  alter column classification type audit_classification,
  alter column outcome type audit_outcome;

alter domain audit_actor_kind add constraint audit_actor_kind_check
  check (value in ('user', 'api_key', 'workflow_run')) not valid;
alter domain audit_origin add constraint audit_origin_check
  check (value in ('user', 'dashboard', 'workflow', 'ai')) not valid;
alter domain audit_classification add constraint audit_classification_check
  check (value in ('read', 'write')) not valid;
alter domain audit_outcome add constraint audit_outcome_check
  check (value in ('allowed', 'pending', 'denied', 'failed')) not valid;

