-- Rate limits shared by every API replica, remembered consent bound to a redirect URI
-- and expiring, sessions a person can see and end.

-- Failure counters of sign-in and the token endpoint (fixed windows; api replicas share them).
-- `bucket` names what is counted ('signin-account:<sha256>', 'address:<address>', ...).
create table rate_limits (
  bucket text primary key,
  window_started_at timestamptz not null,
  hits integer not null
);

-- Remembered consent: per client AND redirect URI, for a limited time (RFC 9700 §4.1 spirit:
-- a code is only issued silently to where the person already agreed to send it). Rows from
-- before this migration match no redirect URI and have expired, so the next connection asks.
alter table oauth_consents add column redirect_uri text not null default '';
alter table oauth_consents add column expires_at timestamptz not null default now();
alter table oauth_consents drop constraint oauth_consents_pkey;
alter table oauth_consents add primary key (user_id, client_id, redirect_uri);

-- What a person sees of their sessions in Settings, to recognise and end one.
alter table sessions add column user_agent text not null default '';
