-- Agent relay (agent/README.md "Replicas"): the process holding an agent's tunnel records where
-- other Countersign processes reach it, so a worker or another API replica can relay through it.
--   session_id   a fresh id per accepted tunnel; the holder refuses relays naming another one, so a
--                process that restarted at the same address never carries a dead session's traffic
--   relay_url    COUNTERSIGN_INTERNAL_URL of the holding process (null: it serves no relay)
-- Both are written with connected_at. Freshness still comes from last_seen_at (heartbeats): a row
-- whose holder died stops being refreshed and is then treated as not connected.
alter table agents add column session_id text;
alter table agents add column relay_url text;
