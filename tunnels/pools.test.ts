import { describe, expect, it } from 'vitest';
import type { ConnectionConfig } from '../adapters/types.ts';
import { agentOf, routedAdapterFor } from './pools.ts';

const base: ConnectionConfig = {
  adapter: 'postgres',
  hostname: 'db.internal',
  port: 5432,
  database: 'app',
  username: 'u',
  password: 'p',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: 1,
};
const behind = (over: Partial<ConnectionConfig> = {}) =>
  ({ ...base, ...over, agentId: 'agt_01' }) as ConnectionConfig;

describe('routing a database behind an agent', () => {
  it('reads the agent from the config connectionConfigFor built', () => {
    expect(agentOf(behind())).toBe('agt_01');
    expect(agentOf(base)).toBeNull();
    expect(agentOf({ ...base, agentId: null } as ConnectionConfig)).toBeNull();
  });

  it('never dials the database directly from a process without a hub', async () => {
    const pool = routedAdapterFor('postgres', undefined).connect(behind());
    await expect(pool.check()).rejects.toThrow('agent agt_01: this process does not carry agent tunnels');
    await expect(pool.execute('select 1', [], { maxRows: 1, timeoutSeconds: 1 })).rejects.toThrow(
      /agent tunnels/,
    );
  });

  it('refuses engines whose adapters cannot dial elsewhere than the TLS name', async () => {
    const pool = routedAdapterFor('sqlserver', undefined).connect(
      behind({ adapter: 'sqlserver', port: 1433 }),
    );
    await expect(pool.check()).rejects.toThrow(
      'databases behind an agent support postgres, mysql and clickhouse, not sqlserver',
    );
  });
});
