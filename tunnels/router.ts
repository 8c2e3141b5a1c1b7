// Which path a call to a database behind an agent takes in this process (agent/README.md
// "Replicas"): the agent's own tunnel when this process holds it, otherwise a relay through the
// process that does. Pools see one AgentTunnels either way (pools.ts).

import type { AgentHub } from './hub.ts';
import type { Target } from './protocol.ts';
import type { RelayClient } from './relay-client.ts';
import type { AgentTunnels } from './tunnels.ts';

export class AgentRouter implements AgentTunnels {
  constructor(
    private readonly hub: AgentHub,
    private readonly relay: RelayClient,
  ) {}

  private local(agentId: string): boolean {
    return this.hub.isConnected(agentId);
  }

  isConnected(agentId: string): boolean {
    return this.local(agentId) || this.relay.isConnected(agentId);
  }

  async ready(agentId: string): Promise<void> {
    if (this.local(agentId)) return;
    // Draining here: the agent is leaving; relaying back to ourselves would not help.
    if (this.hub.isDraining(agentId)) throw await this.hub.unavailable(agentId);
    await this.relay.ready(agentId);
  }

  /** Both counters only grow, so their sum changes whenever either path changed. */
  generation(agentId: string): number {
    return this.hub.generation(agentId) + this.relay.generation(agentId);
  }

  tunnel(agentId: string, target: Target): Promise<Target> {
    return this.local(agentId) ? this.hub.tunnel(agentId, target) : this.relay.tunnel(agentId, target);
  }

  refusal(agentId: string, target: Target, since: number): string | null {
    return this.hub.refusal(agentId, target, since) ?? this.relay.refusal(agentId, target, since);
  }

  loss(agentId: string, since: number): string | null {
    return this.relay.loss(agentId, since) ?? this.hub.loss(agentId, since);
  }

  label(agentId: string): string {
    return this.local(agentId) ? this.hub.label(agentId) : this.relay.label(agentId);
  }

  watch(agentId: string, fn: () => void): () => void {
    const a = this.hub.watch(agentId, fn);
    const b = this.relay.watch(agentId, fn);
    return () => {
      a();
      b();
    };
  }

  async close(): Promise<void> {
    await this.relay.close();
  }
}
