import { describe, expect, it } from 'vitest';
import { adapterFor } from './index.ts';
import { PoolRegistry } from './registry.ts';
import { ADAPTERS, type Adapter, type AdapterPool, type ConnectionConfig } from './types.ts';

// The one fake in the adapter tests: it counts pools to pin the cache logic, it is not a database.
function fakeAdapter() {
  const made: Array<{ config: ConnectionConfig; closed: boolean }> = [];
  const adapter: Adapter = {
    name: 'postgres',
    placeholder: (i) => `$${i}`,
    connect(config) {
      const record = { config, closed: false };
      made.push(record);
      const pool: AdapterPool = {
        check: async () => {},
        execute: async () => ({
          columns: [],
          rows: [],
          command: '',
          messages: [],
          num_rows: 0,
          truncated: false,
        }),
        readSchema: async () => [],
        close: async () => {
          record.closed = true;
        },
      };
      return pool;
    },
  };
  return { adapter, made };
}

const config = (password: string): ConnectionConfig => ({
  adapter: 'postgres',
  hostname: 'h',
  port: 5432,
  database: 'd',
  username: 'u',
  password,
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: null,
});

describe('PoolRegistry', () => {
  it('reuses the pool of a credential while its version is unchanged, and builds the config once', () => {
    const { adapter, made } = fakeAdapter();
    const registry = new PoolRegistry(() => adapter);
    let configs = 0;
    const cfg = () => {
      configs++;
      return config('a');
    };
    const key = { databaseId: 'db_1', credentialId: 'crd_1', version: 'v1' };
    const first = registry.acquire(key, cfg);
    expect(registry.acquire({ ...key }, cfg)).toBe(first);
    expect(made).toHaveLength(1);
    expect(configs).toBe(1);
  });

  it('gives a new pool after a version change and closes the old one', async () => {
    const { adapter, made } = fakeAdapter();
    const registry = new PoolRegistry(() => adapter);
    const key = { databaseId: 'db_1', credentialId: 'crd_1', version: 'v1' };
    const old = registry.acquire(key, () => config('a'));
    const fresh = registry.acquire({ ...key, version: 'v2' }, () => config('b'));
    expect(fresh).not.toBe(old);
    expect(made[1]?.config.password).toBe('b');
    await registry.closeAll();
    expect(made.map((m) => m.closed)).toEqual([true, true]);
  });

  it('keeps one pool per credential', () => {
    const { adapter, made } = fakeAdapter();
    const registry = new PoolRegistry(() => adapter);
    const a = registry.acquire({ databaseId: 'db_1', credentialId: 'crd_1', version: 'v' }, () =>
      config('a'),
    );
    const b = registry.acquire({ databaseId: 'db_1', credentialId: 'crd_2', version: 'v' }, () =>
      config('b'),
    );
    expect(a).not.toBe(b);
    expect(registry.size).toBe(2);
    expect(made).toHaveLength(2);
  });

  it('invalidate(databaseId) closes every pool of that database only', async () => {
    const { adapter, made } = fakeAdapter();
    const registry = new PoolRegistry(() => adapter);
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_1', version: 'v' }, () => config('a'));
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_2', version: 'v' }, () => config('b'));
    registry.acquire({ databaseId: 'db_2', credentialId: 'crd_3', version: 'v' }, () => config('c'));
    await registry.invalidate('db_1');
    expect(made.map((m) => m.closed)).toEqual([true, true, false]);
    expect(registry.size).toBe(1);
    // The next acquire builds a new pool.
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_1', version: 'v' }, () => config('a'));
    expect(made).toHaveLength(4);
  });

  it('invalidateCredential closes one pool', async () => {
    const { adapter, made } = fakeAdapter();
    const registry = new PoolRegistry(() => adapter);
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_1', version: 'v' }, () => config('a'));
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_2', version: 'v' }, () => config('b'));
    await registry.invalidateCredential('crd_2');
    expect(made.map((m) => m.closed)).toEqual([false, true]);
  });

  it('a pool whose close fails is still dropped', async () => {
    const registry = new PoolRegistry(() => ({
      name: 'postgres',
      placeholder: () => '$1',
      connect: () => ({
        check: async () => {},
        execute: async () => {
          throw new Error('unused');
        },
        readSchema: async () => [],
        close: async () => {
          throw new Error('already gone');
        },
      }),
    }));
    registry.acquire({ databaseId: 'db_1', credentialId: 'crd_1', version: 'v' }, () => config('a'));
    await expect(registry.closeAll()).resolves.toBeUndefined();
    expect(registry.size).toBe(0);
  });
});

describe('adapterFor', () => {
  it('has an adapter for every SPEC.md 2.2 adapter name, with its placeholder style', () => {
    const placeholders = Object.fromEntries(
      ADAPTERS.map((name) => [name, adapterFor(name).placeholder(1, 'x')]),
    );
    expect(placeholders).toEqual({
      postgres: '$1',
      mysql: '?',
      clickhouse: '{p1:String}',
      sqlserver: '@p1',
      oracle: ':1',
    });
    for (const name of ADAPTERS) expect(adapterFor(name).name).toBe(name);
  });

  it('refuses an unknown name', () => {
    expect(() => adapterFor('db2' as never)).toThrow(/unknown adapter/);
    expect(() => adapterFor('toString' as never)).toThrow(/unknown adapter/);
  });
});
