-- Group commit for the audit log (DESIGN.md pipeline step 6). One call appends a batch
-- of entries of ONE organization: it takes the chain head's row lock once, chains the entries in
-- order with the same formula as before (sha256(prev_hash ':' seq ':' body), hex), inserts them
-- and moves the head once. Under concurrency the writers of one process wait behind one lock
-- holder per batch instead of one per entry (store/audit-writer.ts). A batch of one is a single
-- statement there instead, with the same formula: the function call costs more for one entry.
--
-- Each entry arrives only as its body: the canonical JSON of every hashed column
-- (governance/audit-chain.ts). The row is stored from that very text, so what is stored cannot
-- differ from what was hashed, and the call needs two parameters instead of one per column.
-- A query entry's body has no `event` key (its hash is as it was before events existed): that
-- is a 'query'. JSON null is SQL null; `occurred_at` is the ISO string with milliseconds that
-- was hashed.
create function audit_append(p_org_id text, p_bodies text[])
returns table (id text, seq bigint, hash text)
language plpgsql as $$
#variable_conflict use_column
declare
  head_seq bigint;
  head_hash text;
  prevs text[] := '{}';
  hashes text[] := '{}';
  body text;
  n int := 0;
  inserted bigint;
begin
  -- FOR UPDATE waits for the batch ahead and then reads the head it committed (READ COMMITTED).
  select h.seq, h.hash into head_seq, head_hash from audit_heads h where h.org_id = p_org_id for update;
  if not found then
    raise exception 'organization % has no audit chain head', p_org_id using errcode = 'no_data_found';
  end if;
  foreach body in array p_bodies loop
    n := n + 1;
    prevs[n] := head_hash;
    head_hash := encode(sha256(convert_to(head_hash || ':' || (head_seq + n)::text || ':' || body, 'UTF8')), 'hex');
    hashes[n] := head_hash;
  end loop;
  if n = 0 then
    return;
  end if;

  return query
  insert into audit_log as l (
    id, org_id, seq, occurred_at, actor_kind, actor_user_id, actor_api_key_id, actor_workflow_run_id,
    actor_workflow_id, origin, ai_client_id, ai_client_name, database_id, credential_id, statement,
    params, classification, rows_returned, duration_ms, request_id, reviews_required, approved_by,
    bypassed, bypass_reason, outcome, detail, event, subject, prev_hash, hash)
  select
    e.id, e.org_id, head_seq + b.i, e.occurred_at, e.actor_kind, e.actor_user_id, e.actor_api_key_id,
    e.actor_workflow_run_id, e.actor_workflow_id, e.origin, e.ai_client_id, e.ai_client_name,
    e.database_id, e.credential_id, e.statement, e.params, e.classification, e.rows_returned,
    e.duration_ms, e.request_id, e.reviews_required, e.approved_by, e.bypassed, e.bypass_reason,
    e.outcome, e.detail, coalesce(e.event, 'query'), e.subject, prevs[b.i], hashes[b.i]
  from unnest(p_bodies) with ordinality as b(body, i)
  cross join lateral jsonb_populate_record(null::audit_log, b.body::jsonb) as e
  -- An entry of another organization would be hashed into this chain but stored in its own.
  where e.org_id = p_org_id
  returning l.id, l.seq, l.hash;
  get diagnostics inserted = row_count;
  if inserted <> n then
    raise exception 'audit entries of another organization than %', p_org_id using errcode = 'invalid_parameter_value';
  end if;

  update audit_heads h set seq = head_seq + n, prev_hash = prevs[n], hash = head_hash
  where h.org_id = p_org_id;
end $$;
