-- A person's "I do not need the first-run checklist" (the home page's guidance for admins).
-- Only the dismissal is stored: whether each step is done is read from the organization's state.
create table first_run_dismissals (
  user_id text primary key references users(id) on delete cascade,
  dismissed_at timestamptz not null default now()
);
