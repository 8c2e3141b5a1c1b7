// Connections to databases behind an agent. A config that names an agent (connections.ts adds
// `agentId`) gets a pool that dials the hub's loopback tunnel for the database's host and port,
// and never the database's own address: for such a database the tunnel is the only path. When
// the agent is not connected, every call fails at once with an error naming it.

import { unusablePool } from '../adapters/connect.ts';
import { AdapterError } from '../adapters/errors.ts';
import { adapterFor, PoolRegistry } from '../adapters/index.ts';
import type {
  Adapter,
  AdapterName,
  AdapterPool,
  ConnectionConfig,
  ExecuteOptions,
  ParamValue,
} from '../adapters/types.ts';
import type { AgentTunnels } from './tunnels.ts';

/** Engines whose adapters support `dial` (adapters/types.ts). */
const TUNNELED: ReadonlySet<AdapterName> = new Set(['postgres', 'mysql', 'clickhouse']);

/** The agent a connection config is routed through, if any (set by connectionConfigFor). */
export function agentOf(config: ConnectionConfig): string | null {
  return 'agentId' in config && typeof config.agentId === 'string' ? config.agentId : null;
}

/** One inner adapter pool over the tunnel, and the calls running on it. */
interface Inner {
  pool: Promise<AdapterPool>;
  active: number;
  retired: boolean;
}

/**
 * An adapter pool over the agent's tunnel. The inner pool is replaced after the agent drains or
 * reconnects: its connections rode the old tunnel, so it is closed as soon as no call uses it,
 * which also lets a draining agent finish once the running queries have.
 */
class AgentPool implements AdapterPool {
  private inner: Inner | null = null;
  private unwatch: (() => void) | null = null;
  private readonly target: { host: string; port: number };

  constructor(
    private readonly adapter: Adapter,
    private readonly config: ConnectionConfig,
    private readonly agentId: string,
    private readonly tunnels: AgentTunnels,
  ) {
    this.target = { host: config.hostname, port: config.port };
  }

  check(): Promise<void> {
    return this.run((p) => p.check());
  }

  execute(sql: string, params: ParamValue[], options: ExecuteOptions) {
    return this.run((p) => p.execute(sql, params, options));
  }

  readSchema() {
    return this.run((p) => p.readSchema());
  }

  async close(): Promise<void> {
    this.unwatch?.();
    this.unwatch = null;
    const inner = this.inner;
    this.inner = null;
    if (inner) await closeInner(inner);
  }

  private current(): Inner {
    if (this.inner) return this.inner;
    this.unwatch ??= this.tunnels.watch(this.agentId, () => this.retire());
    const pool = this.tunnels
      .tunnel(this.agentId, this.target)
      .then((dial) => this.adapter.connect({ ...this.config, dial }));
    const inner: Inner = { pool, active: 0, retired: false };
    pool.catch(() => {
      if (this.inner === inner) this.inner = null;
    });
    this.inner = inner;
    return inner;
  }

  private retire(): void {
    const inner = this.inner;
    if (!inner) return;
    this.inner = null;
    inner.retired = true;
    if (inner.active === 0) void closeInner(inner);
  }

  private async run<T>(fn: (pool: AdapterPool) => Promise<T>): Promise<T> {
    await this.tunnels.ready(this.agentId);
    const inner = this.current();
    inner.active++;
    const generation = this.tunnels.generation(this.agentId);
    const since = Date.now();
    // Some drivers never notice their socket closing under TLS (mysql2 listens on the raw
    // socket only), and would wait for the statement timeout: the tunnel's end fails the call.
    let unwatch = () => {};
    const lost = new Promise<never>((_, reject) => {
      unwatch = this.tunnels.watch(this.agentId, () => {
        if (this.tunnels.generation(this.agentId) !== generation)
          reject(new AdapterError('the tunnel closed while the call was running', 'connection'));
      });
    });
    lost.catch(() => {});
    const work = inner.pool.then(fn);
    // When the tunnel's end wins the race, the driver's own late failure must not go unhandled.
    work.catch(() => {});
    try {
      return await Promise.race([work, lost]);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // The driver only saw its socket die; say why.
      if (this.tunnels.generation(this.agentId) !== generation || !this.tunnels.isConnected(this.agentId))
        throw new AdapterError(
          this.tunnels.loss(this.agentId, since) ??
            `${this.tunnels.label(this.agentId)} disconnected: ${message}`,
          'connection',
        );
      const refusal = this.tunnels.refusal(this.agentId, this.target, since);
      if (refusal) throw new AdapterError(refusal, 'connection');
      throw err;
    } finally {
      unwatch();
      inner.active--;
      if (inner.retired && inner.active === 0) void closeInner(inner);
    }
  }
}

async function closeInner(inner: Inner): Promise<void> {
  const pool = await inner.pool.catch(() => null);
  await pool?.close().catch(() => {});
}

/**
 * The adapter for `name`, routing configs that name an agent through `tunnels` (or its `via`: the
 * router that relays through the process holding the tunnel, router.ts). Without any (a process
 * that neither holds nor relays tunnels) such a config gets a pool that says so.
 */
export function routedAdapterFor(name: AdapterName, tunnels: AgentTunnels | undefined): Adapter {
  const adapter = adapterFor(name);
  return {
    ...adapter,
    connect(config: ConnectionConfig): AdapterPool {
      const agentId = agentOf(config);
      if (agentId === null) return adapter.connect(config);
      if (!TUNNELED.has(config.adapter))
        return unusablePool(
          new AdapterError(
            `databases behind an agent support postgres, mysql and clickhouse, not ${config.adapter}`,
            'config',
          ),
        );
      const route = tunnels?.via ?? tunnels;
      if (!route)
        return unusablePool(
          new AdapterError(`agent ${agentId}: this process does not carry agent tunnels`, 'connection'),
        );
      return new AgentPool(adapter, config, agentId, route);
    },
  };
}

/** The pool registry of a process, with agent routing (cli/boot.ts, test/helpers/service.ts). */
export function createAgentAwarePools(tunnels: AgentTunnels | undefined): PoolRegistry {
  return new PoolRegistry((name) => routedAdapterFor(name, tunnels));
}
