// What pools need from whatever carries a process's agent traffic (pools.ts): the local hub
// (hub.ts), the relay to the process that holds the tunnel (relay-client.ts), or the router that
// picks between them (router.ts). TunnelBook is the bookkeeping the first two share.

import { agentLabel } from './agent-status.ts';
import { targetKey } from './loopback.ts';
import type { Target } from './protocol.ts';

export interface AgentTunnels {
  isConnected(agentId: string): boolean;
  /** Resolves when calls to the agent can be carried now; otherwise throws the clear AdapterError. */
  ready(agentId: string): Promise<void>;
  /** Increments on every connect and disconnect of the agent: a change means streams were cut. */
  generation(agentId: string): number;
  /** The loopback address whose connections are relayed by the agent to `target`. */
  tunnel(agentId: string, target: Target): Promise<Target>;
  /** The agent's last refusal of a stream to `target` after `since` (ms epoch), if any. */
  refusal(agentId: string, target: Target, since: number): string | null;
  /** Why the path to the agent last went away after `since`, when this side knows (a relay's holder went silent). */
  loss(agentId: string, since: number): string | null;
  label(agentId: string): string;
  /** Calls `fn` whenever the agent drains or its tunnel goes away; returns the unsubscribe. */
  watch(agentId: string, fn: () => void): () => void;
  /** Where calls should go instead, when set: the hub's router, which adds relays (router.ts). */
  readonly via?: AgentTunnels | null;
}

/** Generations, watchers, agent names and last refusals, per agent. */
export abstract class TunnelBook {
  protected readonly names = new Map<string, string>();
  private readonly generations = new Map<string, number>();
  private readonly refusals = new Map<string, { at: number; reason: string }>();
  private readonly losses = new Map<string, { at: number; reason: string }>();
  private readonly watchers = new Map<string, Set<() => void>>();

  generation(agentId: string): number {
    return this.generations.get(agentId) ?? 0;
  }

  watch(agentId: string, fn: () => void): () => void {
    const set = this.watchers.get(agentId) ?? new Set<() => void>();
    this.watchers.set(agentId, set);
    set.add(fn);
    return () => set.delete(fn);
  }

  label(agentId: string): string {
    return agentLabel(agentId, this.names.get(agentId) ?? null);
  }

  refusal(agentId: string, target: Target, since: number): string | null {
    const r = this.refusals.get(targetKey(agentId, target));
    return r && r.at >= since ? r.reason : null;
  }

  loss(agentId: string, since: number): string | null {
    const l = this.losses.get(agentId);
    return l && l.at >= since ? l.reason : null;
  }

  protected lost(agentId: string, reason: string): void {
    this.losses.set(agentId, { at: Date.now(), reason });
  }

  protected refused(agentId: string, target: Target, reason: string): void {
    this.refusals.set(targetKey(agentId, target), { at: Date.now(), reason });
  }

  protected notify(agentId: string): void {
    for (const fn of this.watchers.get(agentId) ?? []) fn();
  }

  protected bump(agentId: string): void {
    this.generations.set(agentId, this.generation(agentId) + 1);
  }
}
