import { describe, expect, it } from 'vitest';
import type { AgentRow } from '../store/agents.ts';
import { agentLabel, agentStatus, isConnectedRow } from './agent-status.ts';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const row = (over: Partial<AgentRow>): AgentRow => ({
  id: 'agt_01',
  org_id: 'org_01',
  name: 'edge-1',
  secret_hash: 'x',
  created_by: null,
  created_at: t(0),
  revoked_at: null,
  connected_at: t(10),
  disconnected_at: null,
  last_seen_at: t(20),
  version: '0.1.0',
  session_id: null,
  relay_url: null,
  ...over,
});

describe('agent status as every replica sees it', () => {
  it('is connected while the tunnel is open and the holder renewed its lease within 10 s', () => {
    expect(isConnectedRow(row({}), t(30))).toBe(true);
  });
  it('is not connected once the lease lapsed (the holder died or hangs)', () => {
    expect(isConnectedRow(row({}), t(31))).toBe(false);
  });
  it('is not connected after a disconnect, and connected again after a later connect', () => {
    expect(isConnectedRow(row({ disconnected_at: t(15) }), t(30))).toBe(false);
    expect(isConnectedRow(row({ disconnected_at: t(5) }), t(30))).toBe(true);
  });
  it('is never connected when revoked or never seen', () => {
    expect(isConnectedRow(row({ revoked_at: t(25) }), t(30))).toBe(false);
    expect(isConnectedRow(row({ connected_at: null, last_seen_at: null }), t(30))).toBe(false);
  });
  it('presents id, name, connected, last_seen_at, version, revoked', () => {
    expect(agentStatus(row({}), t(30))).toEqual({
      id: 'agt_01',
      name: 'edge-1',
      connected: true,
      last_seen_at: t(20).toISOString(),
      version: '0.1.0',
      revoked: false,
    });
  });
  it('names the agent in errors by name and id', () => {
    expect(agentLabel('agt_01', 'edge-1')).toBe('agent "edge-1" (agt_01)');
    expect(agentLabel('agt_01', null)).toBe('agent agt_01');
  });
});
