// biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow steps are templates.
// Temporal holds no readable protected data: every payload of a run's history is encrypted, and
// the codec endpoint decodes it only for a person of the run's organization, redacted by their
// own data-protection policy as on the run page. Real PostgreSQL, Temporal and the service.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { insertOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { signIn } from '../helpers/service.ts';
import { type Person, type ProtectionWorld, SECRET, startProtectionWorld } from './protection-world.ts';
import { runWorkflow, type WorkflowView } from './setup.ts';

const UI_ORIGIN = 'http://127.0.0.1:18233';
const MARKER = `input-marker-${newId('run').slice(-8)}`;
const FAILURE = `failure-text-${newId('run').slice(-8)}`;

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

let w: ProtectionWorld;
let member: Person;
let admin: Person;
let connection: Connection;
let raw: Client;
let okRun: { workflowId: string; runId: string };
let failedRun: { workflowId: string; runId: string };

beforeAll(async () => {
  w = await startProtectionWorld({ env: { TEMPORAL_UI_URL: `${UI_ORIGIN}/` } });
  member = await w.person('member', 'pe.member@example.test');
  admin = await w.person('admin', 'pe.admin@example.test');
  // A client WITHOUT the service's data converter: what anyone with Temporal access reads.
  connection = await Connection.connect({ address: servers().temporal.address });
  raw = new Client({ connection, namespace: w.env.svc.deps.config.temporalNamespace });

  const wf = await create({
    name: 'Encrypted lookup',
    inputs: [
      { key: 'who', description: 'Name', type: 'string' },
      { key: 'note', description: 'A note', type: 'string' },
    ],
    steps: [
      {
        name: 'lookup',
        action: {
          __type__: 'query',
          credential_id: w.pg.credentialId,
          query: 'select name, email, ssn, ${note} as note from people where name = ${who}',
        },
      },
    ],
  });
  const failing = await create({
    name: 'Encrypted failure',
    steps: [
      {
        name: 'boom',
        action: {
          __type__: 'query',
          credential_id: w.pg.credentialId,
          query: `select cast('${FAILURE}' as int)`,
        },
      },
    ],
  });
  okRun = { workflowId: wf.id, runId: await runWorkflow(w.env, wf.id, { who: 'Ada', note: MARKER }) };
  failedRun = { workflowId: failing.id, runId: await runWorkflow(w.env, failing.id) };
  const ok = await w.env.waitRun(okRun.workflowId, okRun.runId);
  expect(ok.status, ok.error ?? '').toBe('succeeded');
  const failed = await w.env.waitRun(failedRun.workflowId, failedRun.runId);
  expect(failed.status).toBe('failed');
  expect(failed.error).toContain(FAILURE);
});
afterAll(async () => {
  await connection?.close();
  await w?.stop();
});

async function create(body: Record<string, unknown>): Promise<WorkflowView> {
  const res = await w.env.api<WorkflowView>('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Every string and byte string of a history (bytes as UTF-8), and its payloads in codec JSON. */
async function rawHistory(runId: string): Promise<{ text: string; payloads: JsonPayload[] }> {
  const history = await raw.workflow.getHandle(runId).fetchHistory();
  const parts: string[] = [];
  const payloads: JsonPayload[] = [];
  const walk = (node: unknown) => {
    if (typeof node === 'string') parts.push(node);
    else if (node instanceof Uint8Array) parts.push(Buffer.from(node).toString('utf8'));
    else if (Array.isArray(node)) node.forEach(walk);
    else if (typeof node === 'object' && node !== null) {
      const r = node as Record<string, unknown>;
      const m = r.metadata as Record<string, Uint8Array> | undefined;
      if (m && m.encoding instanceof Uint8Array && 'data' in r) {
        payloads.push({
          metadata: Object.fromEntries(
            Object.entries(m).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from((r.data as Uint8Array | null) ?? []).toString('base64'),
        });
      }
      Object.values(r).forEach(walk);
    }
  };
  walk(history);
  return { text: parts.join('\n'), payloads };
}

const encoding = (p: JsonPayload) => Buffer.from(p.metadata.encoding ?? '', 'base64').toString('utf8');
const decodedText = (ps: JsonPayload[]) =>
  ps.map((p) => Buffer.from(p.data, 'base64').toString('utf8')).join('\n');

function decode(
  payloads: JsonPayload[],
  headers: Record<string, string> = {},
  path = '/temporal/codec/decode',
) {
  return w.env.svc.fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads }),
  });
}

describe('Temporal history without the codec', () => {
  it('holds none of the row values, the inputs or the failure text', async () => {
    const ok = await rawHistory(okRun.runId);
    const failed = await rawHistory(failedRun.runId);
    for (const h of [ok, failed]) {
      expect(h.payloads.length).toBeGreaterThan(0);
      for (const secret of [SECRET.email, SECRET.ssn, MARKER, FAILURE]) expect(h.text).not.toContain(secret);
    }
    // Every payload is ciphertext, but the search attributes (ids, indexed by Temporal).
    const plain = ok.payloads.filter((p) => encoding(p) !== 'binary/encrypted');
    expect(plain.map((p) => Buffer.from(p.data, 'base64').toString('utf8'))).toEqual(
      expect.not.arrayContaining([expect.stringContaining('Ada')]),
    );
    expect(ok.payloads.filter((p) => encoding(p) === 'binary/encrypted').length).toBeGreaterThan(3);
  });
});

describe('the codec endpoint', () => {
  it('decodes the values for an admin, and audits the decode', async () => {
    const { payloads } = await rawHistory(okRun.runId);
    const res = await decode(payloads, admin.bearer);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const text = decodedText(((await res.json()) as { payloads: JsonPayload[] }).payloads);
    for (const value of [SECRET.email, SECRET.ssn, MARKER]) expect(text).toContain(value);
    const failed = await decode((await rawHistory(failedRun.runId)).payloads, admin.bearer);
    expect(decodedText(((await failed.json()) as { payloads: JsonPayload[] }).payloads)).toContain(FAILURE);

    const audit = await w.env.api<{ entries?: Array<Record<string, unknown>> } & Record<string, unknown>>(
      'GET',
      '/api/v1/audit?event=temporal.payloads_decoded',
    );
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain(okRun.runId);
    expect(JSON.stringify(audit.body)).not.toContain(SECRET.ssn);
  });

  it('redacts for a member under a policy, as the run page does', async () => {
    const page = await w.env.api<{ steps: Array<{ output: { rows: unknown[][]; redacted?: string } }> }>(
      'GET',
      `/api/v1/workflows/${okRun.workflowId}/runs/${okRun.runId}`,
      undefined,
      member.bearer,
    );
    expect(page.status).toBe(200);
    expect(page.body.steps[0]!.output.redacted).toBeTruthy();

    const { payloads } = await rawHistory(okRun.runId);
    const res = await decode(payloads, member.bearer);
    expect(res.status).toBe(200);
    const out = ((await res.json()) as { payloads: JsonPayload[] }).payloads;
    const text = decodedText(out);
    for (const value of [SECRET.email, SECRET.ssn, MARKER]) expect(text).not.toContain(value);
    expect(text).toContain('values hidden');
    expect(out).toHaveLength(payloads.length);
  });

  it("hides a failed run's error text from a member the run page hides it from", async () => {
    const page = await w.env.api<{ error: string | null }>(
      'GET',
      `/api/v1/workflows/${failedRun.workflowId}/runs/${failedRun.runId}`,
      undefined,
      member.bearer,
    );
    expect(page.status).toBe(200);
    expect(page.body.error).not.toContain(FAILURE);

    const { payloads } = await rawHistory(failedRun.runId);
    const res = await decode(payloads, member.bearer);
    expect(res.status).toBe(200);
    const text = decodedText(((await res.json()) as { payloads: JsonPayload[] }).payloads);
    expect(text).not.toContain(FAILURE);
  });

  it('refuses without an identity (401) and another organization (403), with no plaintext', async () => {
    const { payloads } = await rawHistory(okRun.runId);
    const anonymous = await decode(payloads);
    expect(anonymous.status).toBe(401);
    const forged = await decode(payloads, { authorization: 'Bearer cspat_not-a-token' });
    expect(forged.status).toBe(401);

    const sql = w.env.svc.deps.sql;
    const org = await insertOrganization(sql, { id: newId('org'), name: 'Elsewhere' });
    const stranger = await createUser(sql, {
      orgId: org.id,
      email: 'stranger@elsewhere.test',
      role: 'super_admin',
      password: 'pw-elsewhere-1234',
    });
    const { secret } = await createPersonalToken(sql, { userId: stranger.id, name: 't', expiresAt: null });
    const other = await decode(payloads, { authorization: `Bearer ${secret}` });
    expect(other.status).toBe(403);
    for (const res of [anonymous, forged, other]) {
      const body = await res.text();
      for (const value of [SECRET.email, SECRET.ssn, MARKER]) expect(body).not.toContain(value);
    }
  });

  it('speaks the codec-server contract: namespace in the path or header, encode round trip', async () => {
    const ns = w.env.svc.deps.config.temporalNamespace;
    const { payloads } = await rawHistory(okRun.runId);
    const inPath = await decode(payloads, admin.bearer, `/temporal/codec/${ns}/decode`);
    expect(inPath.status).toBe(200);
    const inHeader = await decode(payloads, { ...admin.bearer, 'x-namespace': ns });
    expect(inHeader.status).toBe(200);
    const wrongNs = await decode(payloads, { ...admin.bearer, 'x-namespace': 'someone-else' });
    expect(wrongNs.status).toBe(404);

    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"hi"').toString('base64'),
    };
    const enc = await w.env.svc.fetch('/temporal/codec/encode', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...member.bearer },
      body: JSON.stringify({ payloads: [plain] }),
    });
    const sealed = ((await enc.json()) as { payloads: JsonPayload[] }).payloads;
    expect(encoding(sealed[0]!)).toBe('binary/encrypted');
    const back = await decode(sealed, member.bearer);
    expect(((await back.json()) as { payloads: JsonPayload[] }).payloads).toEqual([plain]);
  });

  it('lets the configured Temporal UI origin call with the session cookie, and no other origin', async () => {
    const { payloads } = await rawHistory(okRun.runId);
    const pre = await w.env.svc.fetch('/temporal/codec/decode', {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');

    const { cookie } = await signIn(w.env.svc, admin.email, admin.password);
    const fromUi = await decode(payloads, { cookie, origin: UI_ORIGIN });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(decodedText(((await fromUi.json()) as { payloads: JsonPayload[] }).payloads)).toContain(
      SECRET.ssn,
    );

    const evil = await decode(payloads, { cookie, origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    expect(await evil.text()).not.toContain(SECRET.ssn);
  });
});
