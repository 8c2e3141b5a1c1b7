import { describe, expect, it } from 'vitest';
import { backoffDelay, connectUrl } from '../../agent/client.ts';
import {
  decodeData,
  encodeData,
  isAllowed,
  parseAgentMessage,
  parseServerMessage,
} from '../../tunnels/protocol.ts';

// The pure parts of the agent protocol (agent/README.md "Protocol"). They live here rather than
// beside the code because the unit project does not include agent/.
describe('data frames', () => {
  it('carry the stream id in front of the payload', () => {
    const frame = encodeData(0xfffffffe, Buffer.from('hello'));
    expect(decodeData(frame)).toEqual({ stream: 0xfffffffe, payload: Buffer.from('hello') });
    expect(decodeData(Buffer.from([1, 2]))).toBeNull();
  });
});

describe('control frames', () => {
  it('accept the documented shapes only', () => {
    expect(parseServerMessage('{"type":"open","stream":3,"host":"db","port":5432}')).toEqual({
      type: 'open',
      stream: 3,
      host: 'db',
      port: 5432,
    });
    expect(parseServerMessage('{"type":"open","stream":0,"host":"db","port":5432}')).toBeNull();
    expect(parseServerMessage('{"type":"exec","cmd":"rm -rf /"}')).toBeNull();
    expect(parseServerMessage('not json')).toBeNull();
    expect(parseAgentMessage('{"type":"refused","stream":3,"reason":"no"}')).toMatchObject({
      type: 'refused',
    });
    expect(
      parseAgentMessage('{"type":"hello","agent_id":"x","name":"x","allowed":[],"heartbeat_ms":100}'),
    ).toBeNull();
  });
});

describe('the allowlist', () => {
  const allowed = [{ host: 'db.internal', port: 5432 }];
  it('matches host (case-insensitively, as DNS does) and port exactly', () => {
    expect(isAllowed(allowed, 'DB.internal', 5432)).toBe(true);
    expect(isAllowed(allowed, 'db.internal', 5433)).toBe(false);
    expect(isAllowed(allowed, 'db.internal.evil', 5432)).toBe(false);
    expect(isAllowed([], 'db.internal', 5432)).toBe(false);
  });
});

describe('reconnect backoff', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    expect(backoffDelay(0, 500, 30_000, () => 1)).toBe(500);
    expect(backoffDelay(3, 500, 30_000, () => 1)).toBe(4000);
    expect(backoffDelay(30, 500, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(30, 500, 30_000, () => 0)).toBe(250);
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(10, 500, 30_000)));
    expect(spread.size).toBeGreaterThan(10);
  });
});

describe('the service URL', () => {
  it('uses wss for https and refuses plain http except to loopback (the token must not travel in clear)', () => {
    expect(connectUrl('https://cs.example.com')).toBe('wss://cs.example.com/api/v1/agents/connect');
    expect(connectUrl('http://127.0.0.1:3000')).toBe('ws://127.0.0.1:3000/api/v1/agents/connect');
    expect(() => connectUrl('http://cs.example.com')).toThrow(/https/);
    expect(() => connectUrl('ftp://cs.example.com')).toThrow();
  });
});
