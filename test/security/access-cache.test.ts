// Access decisions are cached between requests (store/access-cache.ts), and a
// revocation still takes effect before the next request can observe it.

import { createServer, type Server, Socket } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { AccessCache, CHANNEL } from '../../store/access-cache.ts';
import { openStore, type Sql } from '../../store/db.ts';
import { addPerson, signIn, startTestService, type TestService } from '../helpers/service.ts';
import { callTool, createTable, mcpClient, registerDatabase } from '../mcp/target.ts';
import { connect, mcpStatusOf } from '../oauth/flow.ts';

let svc: TestService;
let mcp: Client;
let token: string;
let memberId: string;
let restricted: { id: string; credentialId: string };
const member = { email: 'cache-member@example.test', password: 'member password 123' };
const TABLE = `cache_${Date.now()}`;

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 2);
  memberId = await addPerson(svc, member);
  restricted = await registerDatabase(svc, { name: 'restricted', restrict_access: true });
  token = (await connect(svc, member)).tokens.access_token;
  mcp = await mcpClient(svc, token);
});
afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
});

const admin = (method: string, path: string, body?: unknown) =>
  svc.fetch(path, {
    method,
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const count = () =>
  callTool(mcp, 'run_query', {
    database_id: restricted.id,
    sql: `select count(*)::int as n from ${TABLE}`,
  });
/** Another connection to the store, as psql or the admin CLI would change it. */
const outside = () => openStore(svc.storeUrl, { max: 1 });

describe('revocation wins the race with the cache', () => {
  it('granting and revoking database access show on the very next MCP call, every time', async () => {
    expect(svc.deps.accessCache?.live).toBe(true);
    for (let i = 0; i < 25; i++) {
      expect(
        (await admin('POST', `/api/v1/desk/databases/${restricted.id}/grants`, { user_id: memberId })).status,
      ).toBe(201);
      // Twice: the second answer comes from the cache the first one filled.
      expect((await count()).data).toMatchObject({ status: 'executed', rows: [[2]] });
      expect((await count()).data).toMatchObject({ status: 'executed', rows: [[2]] });
      expect(
        (await admin('DELETE', `/api/v1/desk/databases/${restricted.id}/grants/${memberId}`)).status,
      ).toBe(200);
      const refused = await count();
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain('no such database');
    }
  });

  it('disabling the person refuses their token on the next request', async () => {
    expect((await mcpStatusOf(svc, token)).status).toBe(200);
    expect((await admin('PATCH', `/api/v1/users/${memberId}`, { disabled: true })).status).toBe(200);
    expect((await mcpStatusOf(svc, token)).status).toBe(401);
    // Disabling ended the person's AI grants; enabled again, they connect anew.
    expect((await admin('PATCH', `/api/v1/users/${memberId}`, { disabled: false })).status).toBe(200);
    expect((await mcpStatusOf(svc, token)).status).toBe(401);
    await mcp.close();
    token = (await connect(svc, member)).tokens.access_token;
    mcp = await mcpClient(svc, token);
    expect((await mcpStatusOf(svc, token)).status).toBe(200);
  });

  it('a change made outside the service (psql, the CLI) empties the cache when it commits', async () => {
    await admin('POST', `/api/v1/desk/databases/${restricted.id}/grants`, { user_id: memberId });
    expect((await count()).isError).toBe(false);
    const other = outside();
    try {
      await other`delete from database_grants where database_id = ${restricted.id} and user_id = ${memberId}`;
      // No request of ours made the change, so none waited for it: the notification arrives on
      // its own, within moments of the commit.
      const t0 = Date.now();
      let refusedAfter = -1;
      while (Date.now() - t0 < 2000) {
        if ((await count()).isError) {
          refusedAfter = Date.now() - t0;
          break;
        }
      }
      expect(refusedAfter).toBeGreaterThanOrEqual(0);
      expect(refusedAfter).toBeLessThan(2000);
    } finally {
      await other.end();
    }
  });

  it('cached rows are frozen: no request can alter what the next one is told', async () => {
    await admin('POST', `/api/v1/desk/databases/${restricted.id}/grants`, { user_id: memberId });
    const { findAccessTarget } = await import('../../store/grants.ts');
    const q = {
      orgId: (await svc.deps.sql<{ org_id: string }[]>`select org_id from users where id = ${memberId}`)[0]!
        .org_id,
      databaseId: restricted.id,
      credentialId: null,
      userId: memberId,
      role: 'member',
    };
    const first = await findAccessTarget(svc.deps.sql, q);
    const second = await findAccessTarget(svc.deps.sql, q);
    expect(second).toBe(first);
    expect(() => {
      (first!.db as { restrict_access: boolean }).restrict_access = false;
    }).toThrow(TypeError);
  });
});

describe('credentials read through the cache are refused on the very next request once ended', () => {
  const me = (headers: Record<string, string>) => svc.fetch('/api/v1/me', { headers });

  it('a revoked API key, every time', async () => {
    for (let i = 0; i < 10; i++) {
      const created = await admin('POST', '/api/v1/api-keys', { name: `cached ${i}` });
      expect(created.status).toBe(201);
      const { id, key } = (await created.json()) as { id: string; key: string };
      // Twice: the second is answered from the rows the first one cached.
      expect((await me({ 'x-api-key': key })).status).toBe(200);
      expect((await me({ 'x-api-key': key })).status).toBe(200);
      expect((await admin('DELETE', `/api/v1/api-keys/${id}`)).status).toBeLessThan(300);
      expect((await me({ 'x-api-key': key })).status).toBe(401);
    }
  });

  it("a key whose owner is disabled, on the owner's next request", async () => {
    const person = { email: 'cache-key-owner@example.test', password: 'owner password 123' };
    const ownerId = await addPerson(svc, { ...person, role: 'admin' });
    const session = await signIn(svc, person.email, person.password);
    const created = await svc.fetch('/api/v1/api-keys', {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'owned' }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    expect((await me({ 'x-api-key': key })).status).toBe(200);
    expect((await me({ 'x-api-key': key })).status).toBe(200);
    expect((await admin('PATCH', `/api/v1/users/${ownerId}`, { disabled: true })).status).toBe(200);
    expect((await me({ 'x-api-key': key })).status).toBe(401);
  });

  it('a signed-out session and a revoked personal token', async () => {
    const session = await signIn(svc, member.email, member.password);
    const cookie = { cookie: session.cookie };
    const made = await svc.fetch('/api/v1/tokens', {
      method: 'POST',
      headers: { ...cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cached' }),
    });
    expect(made.status).toBe(201);
    const { id, token: pat } = (await made.json()) as { id: string; token: string };
    const bearer = { authorization: `Bearer ${pat}` };
    expect((await me(bearer)).status).toBe(200);
    expect((await me(bearer)).status).toBe(200);
    const revoked = await svc.fetch(`/api/v1/tokens/${id}`, { method: 'DELETE', headers: bearer });
    expect(revoked.status).toBe(204);
    expect((await me(bearer)).status).toBe(401);

    expect((await me(cookie)).status).toBe(200);
    expect((await me(cookie)).status).toBe(200);
    const out = await svc.fetch('/logout', {
      method: 'POST',
      headers: cookie,
      body: new URLSearchParams({ _csrf: session.csrf }),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    expect((await me(cookie)).status).toBe(401);
  });
});

describe('which answers wait for the caches (api/middleware/access-settled.ts)', () => {
  it('query-only routes answer without a barrier; a grant change waits for one', async () => {
    const other = outside();
    const barriers: string[] = [];
    const listening = await other.listen(CHANNEL, (payload) => {
      if (payload.startsWith('barrier:')) barriers.push(payload);
    });
    /** How many barriers `act` caused, once its answer arrived and the channel caught up. */
    const barriersOf = async (act: () => Promise<number>, status: number) => {
      const before = barriers.length;
      expect(await act()).toBe(status);
      // A notification of our own after the act arrives after any barrier the act sent.
      const marker = `probe-${Math.random()}`;
      const seen = new Promise<void>((resolve) => {
        void other.listen(CHANNEL, (p) => p === marker && resolve());
      });
      await other`select pg_notify(${CHANNEL}, ${marker})`;
      await seen;
      return barriers.length - before;
    };
    try {
      await admin('POST', `/api/v1/desk/databases/${restricted.id}/grants`, { user_id: memberId });
      const statement = `select count(*)::int as n from ${TABLE}`;
      const session = await signIn(svc, member.email, member.password);
      expect(
        await barriersOf(
          async () =>
            (
              await admin('POST', '/api/v1/desk/query-requests', {
                database_id: restricted.id,
                statement,
              })
            ).status,
          200,
        ),
      ).toBe(0);
      expect(await barriersOf(async () => ((await count()).isError ? 500 : 200), 200)).toBe(0);
      expect(
        await barriersOf(
          async () =>
            (
              await svc.fetch('/console', {
                method: 'POST',
                headers: { cookie: session.cookie },
                body: new URLSearchParams({
                  _csrf: session.csrf,
                  credential: `${restricted.id}/${restricted.credentialId}`,
                  statement,
                }),
              })
            ).status,
          200,
        ),
      ).toBe(0);
      expect(
        await barriersOf(
          async () =>
            (await admin('DELETE', `/api/v1/desk/databases/${restricted.id}/grants/${memberId}`)).status,
          200,
        ),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await listening.unlisten();
      await other.end();
    }
  });
});

describe('the triggers behind the cache (store/migrations/0021_access_changes.sql)', () => {
  it('every table a cached read joins notifies its changes', async () => {
    // The tables of store/oauth.ts findGrantCaller, store/grants.ts findAccessTarget and the
    // policy read in governance/protection/index.ts: a table added to one of them needs a trigger.
    const tables = [
      'oauth_grants',
      'oauth_clients',
      'users',
      'ai_client_controls',
      'databases',
      'credentials',
      'database_grants',
      'credential_grants',
      'data_protection_assignments',
      'data_protection_policies',
      'data_protection_rules',
      'api_keys',
      'personal_tokens',
      'sessions',
    ];
    const rows = await svc.deps.sql<{ table: string }[]>`
      select c.relname as table from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where t.tgname = c.relname || '_access_changed' and not t.tgisinternal and t.tgenabled <> 'D'`;
    expect(rows.map((r) => r.table).sort()).toEqual(expect.arrayContaining([...tables].sort()));
  });

  it("a credential's trigger covers every column but its last-use stamp", async () => {
    // store/migrations/0034_credential_changes.sql lists the columns: one added later and left out
    // would change a cached row without a notification.
    const rows = await svc.deps.sql<{ table: string; listed: string[] | null; columns: string[] }[]>`
      select c.relname as table,
        (select array_agg(a.attname::text order by a.attname) from pg_attribute a
          where a.attrelid = c.oid and a.attnum = any (t.tgattr::int2[])) as listed,
        (select array_agg(a.attname::text order by a.attname) from pg_attribute a
          where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
            and a.attname <> 'last_used_at') as columns
      from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where t.tgname = c.relname || '_access_changed' and c.relname in ('api_keys', 'personal_tokens')`;
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.listed, r.table).toEqual(r.columns);
  });
});

describe('AccessCache rules (store/access-cache.ts)', () => {
  const logger = createLogger('silent');

  /** Runs `fn` with a started cache and another store connection, and closes both after. */
  async function withCache(
    fn: (cache: AccessCache, other: Sql) => Promise<void>,
    options: { limit?: number } = {},
  ): Promise<void> {
    const cache = new AccessCache(svc.storeUrl, logger, options);
    await cache.start();
    const other = outside();
    try {
      await fn(cache, other);
    } finally {
      await other.end();
      await cache.close();
    }
  }

  it('rule 1: a read during which a change was notified is not kept', async () => {
    await withCache(async (cache, other) => {
      let loads = 0;
      const stale = await cache.read('k', async () => {
        loads++;
        await other`select pg_notify(${CHANNEL}, '')`;
        // Returns once the cache has received the change notified above.
        await cache.barrier(other);
        return 'old';
      });
      expect(stale).toBe('old');
      const load = (value: string) => async () => {
        loads++;
        return value;
      };
      expect(await cache.read('k', load('new'))).toBe('new');
      expect(await cache.read('k', load('newer'))).toBe('new');
      expect(loads).toBe(2);
    });
  });

  it('a value the caller does not keep is read again every time; a kept one once', async () => {
    await withCache(async (cache) => {
      let loads = 0;
      const load = (value: string | null) => async () => {
        loads++;
        return value;
      };
      const found = (v: string | null) => v !== null;
      expect(await cache.read('unknown', load(null), found)).toBeNull();
      expect(await cache.read('unknown', load(null), found)).toBeNull();
      expect(loads).toBe(2);
      expect(await cache.read('known', load('row'), found)).toBe('row');
      expect(await cache.read('known', load('other'), found)).toBe('row');
      expect(loads).toBe(3);
    });
  });

  it('concurrent misses of one key read the store once; a read begun after a change does not join', async () => {
    await withCache(async (cache, other) => {
      let loads = 0;
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const slow = async () => {
        loads++;
        await gate;
        return { read: 'before the change' };
      };
      const first = cache.read('k', slow);
      const joined = cache.read('k', slow);
      await other`select pg_notify(${CHANNEL}, '')`;
      await cache.barrier(other);
      // The change has been handled: this read must not get what the one in flight read.
      const after = await cache.read('k', async () => {
        loads++;
        return { read: 'after the change' };
      });
      expect(after).toEqual({ read: 'after the change' });
      release();
      const [a, b] = await Promise.all([first, joined]);
      expect(a).toBe(b);
      expect(Object.isFrozen(a)).toBe(true);
      expect(loads).toBe(2);
      // What the read from before the change got is not kept; the later one is.
      expect(await cache.read('k', async () => ({ read: 'again' }))).toEqual({ read: 'after the change' });
    });
  });

  it('past its limit the least recently used decision goes, not the whole cache', async () => {
    await withCache(
      async (cache) => {
        const loaded: string[] = [];
        const read = (key: string) =>
          cache.read(key, async () => {
            loaded.push(key);
            return key;
          });
        for (const key of ['a', 'b', 'c', 'a', 'd']) await read(key);
        expect(loaded).toEqual(['a', 'b', 'c', 'd']);
        expect(cache.size).toBe(3);
        // b was the least recently used when d came: a, c and d are still held.
        for (const key of ['a', 'c', 'd', 'b']) await read(key);
        expect(loaded).toEqual(['a', 'b', 'c', 'd', 'b']);
      },
      { limit: 3 },
    );
  });

  it('rule 2: with its listening connection gone it reads the store, and trusts memory again once listening', async () => {
    await withCache(async (cache, other) => {
      expect(await cache.read('k', async () => 'a')).toBe('a');
      expect(await cache.read('k', async () => 'b')).toBe('a');
      await other`
        select pg_terminate_backend(pid) from pg_stat_activity
        where application_name = 'countersign-access-listener' and datname = current_database()`;
      await until(() => !cache.live);
      // Deaf: what changes now is never notified, so nothing is served from memory.
      expect(await cache.read('k', async () => 'c')).toBe('c');
      expect(await cache.read('k', async () => 'd')).toBe('d');
      await until(() => cache.live, 5000);
      expect(await cache.read('k', async () => 'e')).toBe('e');
      expect(await cache.read('k', async () => 'f')).toBe('e');
    });
  });

  it('rule 3: after a barrier, every change committed before it has emptied the cache', async () => {
    const cache = new AccessCache(svc.storeUrl, logger);
    await cache.start();
    const other = outside();
    const sql = outside();
    try {
      for (let i = 0; i < 20; i++) {
        const key = `k${i}`;
        expect(await cache.read(key, async () => 'old')).toBe('old');
        expect(await cache.read(key, async () => 'unread')).toBe('old');
        await other`select pg_notify(${CHANNEL}, '')`;
        await cache.barrier(sql);
        expect(await cache.read(key, async () => 'new')).toBe('new');
      }
    } finally {
      await other.end();
      await sql.end();
      await cache.close();
    }
  });
});

describe('across processes (two caches on one store, as two replicas)', () => {
  const logger = createLogger('silent');

  /**
   * `reader` holds `key`; a change is notified from outside and `writer` runs the barrier a
   * request that changed access would: once it returns, `reader` must read the key anew.
   */
  async function staleAfterBarrier(
    reader: AccessCache,
    writer: AccessCache,
    key: string,
    sql: Sql,
    other: Sql,
  ) {
    expect(await reader.read(key, async () => 'old')).toBe('old');
    expect(await reader.read(key, async () => 'unread')).toBe('old');
    await other`select pg_notify(${CHANNEL}, '')`;
    await writer.barrier(sql);
    expect(await reader.read(key, async () => 'new')).toBe('new');
  }

  /** Two started caches (the reader's store reached at `readerUrl`) and two store clients. */
  async function withReplicas(
    readerUrl: string,
    fn: (x: { reader: AccessCache; writer: AccessCache; sql: Sql; other: Sql }) => Promise<void>,
  ): Promise<void> {
    const reader = new AccessCache(readerUrl, logger);
    const writer = new AccessCache(svc.storeUrl, logger);
    await reader.start();
    await writer.start();
    const sql = outside();
    const other = outside();
    try {
      await fn({ reader, writer, sql, other });
    } finally {
      await Promise.all([reader.close(), writer.close(), sql.end(), other.end()]);
    }
  }

  it('a barrier returns only once the other process has dropped what the change made stale', async () => {
    await withReplicas(svc.storeUrl, async ({ reader, writer, sql, other }) => {
      for (let i = 0; i < 20; i++) await staleAfterBarrier(reader, writer, `x${i}`, sql, other);
    });
  });

  it('a listener whose notifications arrive late does not trust its memory on the late probes', async () => {
    // The reader's store connection goes through a proxy that can hold back what the server
    // sends. Probes then keep arriving, each seconds after it was sent, and so does the change:
    // the lease must count from when a probe was sent, or the reader would go on trusting a
    // memory the change has already made stale after the writer's barrier gave up on it.
    const proxy = await delayingProxy(svc.storeUrl);
    try {
      await withReplicas(proxy.url, async ({ reader, writer, sql, other }) => {
        expect(reader.live).toBe(true);
        expect(await reader.read('late', async () => 'old')).toBe('old');
        expect(await reader.read('late', async () => 'unread')).toBe('old');
        proxy.delayMs = 2_500;
        // Long enough for late probes to arrive steadily.
        await new Promise((r) => setTimeout(r, 3_000));
        await other`select pg_notify(${CHANNEL}, '')`;
        // Gives up on the reader's acknowledgement after 2 s: it is on its way, late.
        await writer.barrier(sql);
        expect(reader.live).toBe(false);
        expect(await reader.read('late', async () => 'new')).toBe('new');
      });
    } finally {
      proxy.close();
    }
  });

  it('a lagging process waits for its own barrier even while its lease has lapsed', async () => {
    // The only listener of its store, whose notifications come 1.2 s late: its lease keeps
    // lapsing and returning. If its barrier did not wait for its own word while the lease was
    // out, a late probe sent before the change would restore trust before the change arrived.
    const admin = outside();
    const name = `cs_alone_${Date.now()}`;
    await admin.unsafe(`create database ${name}`);
    const alone = new URL(svc.storeUrl);
    alone.pathname = `/${name}`;
    const proxy = await delayingProxy(alone.toString());
    const cache = new AccessCache(proxy.url, logger);
    const sql = openStore(alone.toString(), { max: 1 });
    const other = openStore(alone.toString(), { max: 1 });
    try {
      await cache.start();
      expect(await cache.read('own', async () => 'old')).toBe('old');
      expect(await cache.read('own', async () => 'unread')).toBe('old');
      proxy.delayMs = 1_200;
      await until(() => !cache.live, 4_000);
      await other`select pg_notify(${CHANNEL}, '')`;
      await cache.barrier(sql);
      await until(() => cache.live, 4_000);
      expect(await cache.read('own', async () => 'new')).toBe('new');
    } finally {
      await Promise.all([cache.close(), sql.end(), other.end()]);
      proxy.close();
      await admin.unsafe(`drop database ${name} with (force)`);
      await admin.end();
    }
  });

  it('a barrier from a process that does not trust its own memory still waits for the others', async () => {
    const a = new AccessCache(svc.storeUrl, logger);
    const deaf = new AccessCache(svc.storeUrl, logger); // never started: not listening
    await a.start();
    const sql = outside();
    const other = outside();
    try {
      // Not listening, it hears no acknowledgement either: it waits out the timeout, after which
      // a listener has either handled the change or lost its lease.
      for (let i = 0; i < 2; i++) await staleAfterBarrier(a, deaf, `d${i}`, sql, other);
    } finally {
      await Promise.all([a.close(), deaf.close(), sql.end(), other.end()]);
    }
  });

  it('a listener that never acknowledges holds a barrier for its timeout, no longer', async () => {
    const a = new AccessCache(svc.storeUrl, logger);
    await a.start();
    // Listening under the listeners' name, and silent: a replica whose event loop is stuck.
    const stuck = postgres(svc.storeUrl, {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'countersign-access-listener' },
    });
    const sql = outside();
    try {
      await stuck.unsafe(`listen ${CHANNEL}`);
      const t0 = performance.now();
      await a.barrier(sql);
      const waited = performance.now() - t0;
      expect(waited).toBeGreaterThanOrEqual(1900);
      expect(waited).toBeLessThan(3000);
      expect(a.live).toBe(true);
    } finally {
      await Promise.all([a.close(), stuck.end(), sql.end()]);
    }
  });

  it('a stalled process stops trusting its memory at once, and again once it hears itself', async () => {
    const a = new AccessCache(svc.storeUrl, logger);
    await a.start();
    try {
      expect(await a.read('s', async () => 'cached')).toBe('cached');
      // Block the event loop past the lease: notifications may be waiting unread on the socket.
      const until = Date.now() + 1700;
      while (Date.now() < until) {}
      expect(a.live).toBe(false);
      expect(await a.read('s', async () => 'read again')).toBe('read again');
      await untilLive(a);
      expect(await a.read('s', async () => 'unread')).toBe('cached');
    } finally {
      await a.close();
    }
  });
});

async function untilLive(cache: AccessCache): Promise<void> {
  await until(() => cache.live, 3000);
}

async function until(ok: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A TCP proxy to the store of `url` that delays what the server sends by `delayMs`. */
async function delayingProxy(url: string): Promise<{ url: string; delayMs: number; close(): void }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const proxy = { url: '', delayMs: 0, close: () => {} };
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    upstream.connect(Number(target.port), target.hostname);
    client.on('data', (chunk) => upstream.write(chunk));
    // A constant delay keeps the order; chunks already on their way keep theirs.
    upstream.on('data', (chunk) => {
      const send = () => client.writable && client.write(chunk);
      if (proxy.delayMs === 0) send();
      else setTimeout(send, proxy.delayMs);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', () => setTimeout(end, proxy.delayMs)).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(address.port);
  proxy.url = proxied.toString();
  proxy.close = () => {
    for (const s of sockets) s.destroy();
    server.close();
  };
  return proxy;
}
