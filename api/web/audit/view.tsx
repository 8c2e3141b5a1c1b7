import { canonicalJson } from '../../../audit/chain.ts';
import { type Change, EVENT_TYPES, type EventType, isEventType } from '../../../audit/event-types.ts';
import type { ChainReport } from '../../../audit/events.ts';
import type { AuditRow } from '../../../store/audit.ts';
import { Badge, when } from '../kit/components.tsx';

export interface AuditFilters {
  person: string;
  database: string;
  outcome: string;
  aiOnly: boolean;
  bypassedOnly: boolean;
  text: string;
  /** 'query', one event kind of audit/event-types.ts, or '' for every kind. */
  type: string;
  /** Days (YYYY-MM-DD, UTC), both included; '' for open. */
  from: string;
  to: string;
}

/** The filters as API query parameters (GET /api/v1/audit and /export take the same ones). */
export function auditQuery(f: AuditFilters): URLSearchParams {
  const q = new URLSearchParams();
  if (f.person) q.set('actor', f.person);
  if (f.database) q.set('database_id', f.database);
  if (f.outcome) q.set('outcome', f.outcome);
  if (f.aiOnly) q.set('origin', 'ai');
  if (f.bypassedOnly) q.set('bypassed', 'true');
  if (f.text) q.set('q', f.text);
  if (f.type) q.set('event', f.type);
  if (f.from) q.set('from', `${f.from}T00:00:00Z`);
  if (f.to) q.set('to', `${f.to}T23:59:59.999Z`);
  return q;
}

export function AuditPage(props: {
  entries: AuditRow[];
  filters: AuditFilters;
  people: Array<{ id: string; email: string }>;
  databases: Array<{ id: string; name: string }>;
  nextCursor: string | null;
  chain: ChainReport | null;
}) {
  const f = props.filters;
  const emails = Object.fromEntries(props.people.map((p) => [p.id, p.email]));
  const dbNames = Object.fromEntries(props.databases.map((d) => [d.id, d.name]));
  const api = auditQuery(f);
  const page = new URLSearchParams({
    ...(f.person ? { person: f.person } : {}),
    ...(f.database ? { database: f.database } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.aiOnly ? { ai: '1' } : {}),
    ...(f.bypassedOnly ? { bypassed: '1' } : {}),
    ...(f.text ? { q: f.text } : {}),
    ...(f.type ? { type: f.type } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
  });
  const groups = [...new Set(Object.values(EVENT_TYPES).map((t) => t.group))];
  return (
    <section>
      <h1>Audit log</h1>
      <form method="get" action="/audit" class="card wide">
        <label for="q">Search statements and AI clients</label>
        <input id="q" name="q" type="search" value={f.text} placeholder="e.g. customers, delete, Claude" />
        <div class="row">
          <div>
            <label for="person">Person</label>
            <select id="person" name="person">
              <option value="">Anyone</option>
              {props.people.map((p) => (
                <option value={p.id} selected={p.id === f.person}>
                  {p.email}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="database">Database</label>
            <select id="database" name="database">
              <option value="">Any database</option>
              {props.databases.map((d) => (
                <option value={d.id} selected={d.id === f.database}>
                  {d.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="filter-outcome">Outcome</label>
            <select id="filter-outcome" name="outcome">
              <option value="">Any outcome</option>
              {['allowed', 'pending', 'denied', 'failed'].map((o) => (
                <option value={o} selected={o === f.outcome}>
                  {o}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="row">
          <div>
            <label for="type">Event type</label>
            <select id="type" name="type">
              <option value="">Any event</option>
              <option value="query" selected={f.type === 'query'}>
                Query
              </option>
              {groups.map((g) => (
                <optgroup label={g}>
                  {(Object.keys(EVENT_TYPES) as EventType[])
                    .filter((k) => EVENT_TYPES[k].group === g)
                    .map((k) => (
                      <option value={k} selected={k === f.type}>
                        {EVENT_TYPES[k].label}
                      </option>
                    ))}
                </optgroup>
              ))}
            </select>
          </div>
          <div>
            <label for="from">From (UTC day)</label>
            <input id="from" name="from" type="date" value={f.from} />
          </div>
          <div>
            <label for="to">To (UTC day)</label>
            <input id="to" name="to" type="date" value={f.to} />
          </div>
        </div>
        <div class="row">
          <label class="check fit">
            <input type="checkbox" name="ai" value="1" checked={f.aiOnly} /> AI-originated only
          </label>
          <label class="check fit">
            <input type="checkbox" name="bypassed" value="1" checked={f.bypassedOnly} /> Review bypassed only
          </label>
          <button type="submit" class="fit">
            Search
          </button>
        </div>
        <p class="muted">
          Export these entries: <a href={`/api/v1/audit/export?${withFormat(api, 'csv')}`}>CSV</a> ·{' '}
          <a href={`/api/v1/audit/export?${withFormat(api, 'ndjson')}`}>NDJSON</a> (hash-chained; verify with
          GET /api/v1/audit/verify)
        </p>
      </form>
      <form method="get" action="/audit" class="row">
        <input type="hidden" name="verify" value="1" />
        <button type="submit" class="fit" id="verify-chain">
          Verify chain
        </button>
        {props.chain ? <ChainResult chain={props.chain} /> : null}
      </form>
      {props.entries.length === 0 ? <p class="muted">No entry matches.</p> : null}
      {props.entries.length > 0 ? (
        <div class="scroll">
          <table id="audit-entries">
            <thead>
              <tr>
                <th>When</th>
                <th>Who</th>
                <th>Origin</th>
                <th>Database</th>
                <th>Statement</th>
                <th>Outcome</th>
                <th>Rows</th>
              </tr>
            </thead>
            <tbody>
              {props.entries.map((e) => (
                <tr>
                  <td>{when(e.occurred_at)}</td>
                  <td>{who(e, emails)}</td>
                  <td>
                    {e.origin === 'ai' ? (
                      <span class="badge warn">AI · {e.ai_client_name ?? 'client'}</span>
                    ) : (
                      e.origin
                    )}
                  </td>
                  <td>{e.database_id ? (dbNames[e.database_id] ?? e.database_id) : '—'}</td>
                  <td>
                    {e.event === 'query' ? <pre>{e.statement}</pre> : <span class="badge">{e.event}</span>}
                    {e.detail ? <div class="muted">{e.detail}</div> : null}
                    {isEventType(e.event) && EVENT_TYPES[e.event].change ? (
                      <WhatChanged change={e.subject as Change} />
                    ) : null}
                  </td>
                  <td>
                    <Badge status={e.outcome} />
                    {e.bypassed ? (
                      <div>
                        <span class="badge bad">review bypassed</span>
                      </div>
                    ) : null}
                  </td>
                  <td>{e.rows_returned ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {props.nextCursor ? (
        <p>
          <a href={`/audit?${page}&cursor=${props.nextCursor}`}>Older entries</a>
        </p>
      ) : null}
    </section>
  );
}

/** The result of Verify chain: OK with the count, or the first entry that does not verify. */
function ChainResult(props: { chain: ChainReport }) {
  const c = props.chain;
  return c.ok ? (
    <p class="notice" id="chain-result" role="status">
      Chain OK: {c.entries} entries verify.
    </p>
  ) : (
    <p class="error" id="chain-result" role="alert">
      Chain broken at entry {c.broken?.seq}
      {c.broken?.id ? ` (${c.broken.id})` : ''}: {c.broken?.reason}. {c.entries} entries before it verify.
    </p>
  );
}

// Keys sorted: jsonb hands them back in its own order.
const shown = (v: unknown): string => (v === null || v === undefined ? '—' : canonicalJson(v));

/** "What changed": each changed field with its value before and after; secrets only named. */
function WhatChanged(props: { change: Change }) {
  const { before, after } = props.change;
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const secrets = props.change.secrets_changed ?? [];
  if (fields.length === 0 && secrets.length === 0) return null;
  return (
    <details class="what-changed">
      <summary>What changed</summary>
      <table>
        <thead>
          <tr>
            <th>Field</th>
            <th>Before</th>
            <th>After</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((k) => (
            <tr>
              <td>{k}</td>
              <td>
                <code>{before === null ? '—' : shown(before[k])}</code>
              </td>
              <td>
                <code>{after === null ? '—' : shown(after[k])}</code>
              </td>
            </tr>
          ))}
          {secrets.map((k) => (
            <tr>
              <td>{k}</td>
              <td colspan={2}>
                <span class="muted">changed (secret, not recorded)</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function withFormat(q: URLSearchParams, format: string): string {
  const copy = new URLSearchParams(q);
  copy.set('format', format);
  return copy.toString();
}

function who(e: AuditRow, emails: Record<string, string>): string {
  if (e.actor_user_id) {
    const person = emails[e.actor_user_id] ?? e.actor_user_id;
    return e.actor_api_key_id ? `${person} (via API key)` : person;
  }
  if (e.actor_workflow_run_id) return `workflow run ${e.actor_workflow_run_id}`;
  return e.actor_api_key_id ? `API key ${e.actor_api_key_id}` : '—';
}
