// The tunnel protocol between the service and an agent (agent/README.md "Protocol"), spoken over
// one WebSocket: JSON text frames for control, binary frames for stream data. Only the service
// opens streams; the agent checks each against the allowlist the service sent.
import * as v from 'valibot';

/** Where the agent connects (an HTTP upgrade on the API). */
export const AGENT_CONNECT_PATH = '/api/v1/agents/connect';
/** The request header carrying the agent's version, shown in its status. */
export const AGENT_VERSION_HEADER = 'x-countersign-agent-version';
/** WebSocket close codes (RFC 6455 §7.4.2: 4000-4999 are for applications). */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  replaced: 4000,
  revoked: 4001,
  protocol: 4002,
  /** Relay link only: the agent's tunnel on the holding process went away. */
  agentGone: 4003,
} as const;

/** Bytes of the stream id in front of each binary data frame. */
export const DATA_HEADER_BYTES = 4;

const Target = v.object({ host: v.pipe(v.string(), v.minLength(1)), port: v.pipe(v.number(), v.integer()) });
const StreamId = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(0xffffffff));
const Reason = v.optional(v.pipe(v.string(), v.maxLength(2000)));

const ServerMessage = v.variant('type', [
  v.object({
    type: v.literal('hello'),
    agent_id: v.string(),
    name: v.string(),
    allowed: v.array(Target),
    heartbeat_ms: v.pipe(v.number(), v.integer(), v.minValue(100)),
  }),
  v.object({ type: v.literal('allow'), allowed: v.array(Target) }),
  v.object({ type: v.literal('open'), stream: StreamId, host: v.string(), port: v.number() }),
  v.object({ type: v.literal('end'), stream: StreamId }),
  v.object({ type: v.literal('close'), stream: StreamId, reason: Reason }),
]);

const AgentMessage = v.variant('type', [
  v.object({ type: v.literal('opened'), stream: StreamId }),
  v.object({ type: v.literal('refused'), stream: StreamId, reason: v.pipe(v.string(), v.maxLength(2000)) }),
  v.object({ type: v.literal('end'), stream: StreamId }),
  v.object({ type: v.literal('close'), stream: StreamId, reason: Reason }),
  v.object({ type: v.literal('draining') }),
]);

export type Target = v.InferOutput<typeof Target>;
export type ServerMessage = v.InferOutput<typeof ServerMessage>;
export type AgentMessage = v.InferOutput<typeof AgentMessage>;
/** What both sides send about a stream. */
export type StreamMessage = Extract<ServerMessage | AgentMessage, { type: 'end' | 'close' }>;

function parse<T>(schema: v.GenericSchema<unknown, T>, text: string): T | null {
  try {
    const out = v.safeParse(schema, JSON.parse(text));
    return out.success ? out.output : null;
  } catch {
    return null;
  }
}

/** A control frame from the service, or null when it is not one. */
export const parseServerMessage = (text: string): ServerMessage | null => parse(ServerMessage, text);
/** A control frame from an agent, or null when it is not one. */
export const parseAgentMessage = (text: string): AgentMessage | null => parse(AgentMessage, text);

/** `id` + payload as one binary frame. */
export function encodeData(stream: number, payload: Buffer): Buffer {
  const header = Buffer.allocUnsafe(DATA_HEADER_BYTES);
  header.writeUInt32BE(stream, 0);
  return Buffer.concat([header, payload]);
}

/** Splits a binary frame; null when it is too short to carry a stream id. */
export function decodeData(frame: Buffer): { stream: number; payload: Buffer } | null {
  if (frame.length < DATA_HEADER_BYTES) return null;
  return { stream: frame.readUInt32BE(0), payload: frame.subarray(DATA_HEADER_BYTES) };
}

/** Exact match on host (case-insensitive, as DNS names are) and port. */
export function isAllowed(allowed: readonly Target[], host: string, port: number): boolean {
  const h = host.toLowerCase();
  return allowed.some((t) => t.port === port && t.host.toLowerCase() === h);
}

/** A `ws` message payload (Buffer, fragments, or ArrayBuffer) as one Buffer. */
export function wsPayload(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * One `ws` message at either end of a tunnel from the service side: a binary frame goes to its
 * stream; a text frame is returned as the service's control message (`control` null when it is
 * none). Null when the message was data and is delivered.
 */
export function readServerFrame(
  data: Buffer | ArrayBuffer | Buffer[],
  isBinary: boolean,
  streams: { receive(stream: number, payload: Buffer): void },
): { control: ServerMessage | null } | null {
  const buf = wsPayload(data);
  if (isBinary) {
    const frame = decodeData(buf);
    if (frame) streams.receive(frame.stream, frame.payload);
    return null;
  }
  return { control: parseServerMessage(buf.toString('utf8')) };
}
