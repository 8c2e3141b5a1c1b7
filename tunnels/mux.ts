// TCP streams multiplexed over one WebSocket, the same on both ends of the tunnel. Each local
// socket is bound to a stream id: its bytes go out as binary frames, its half-close as `end`,
// its close or error as `close`; what arrives for the id is written back to it.
//
// Backpressure, both ways:
// - out: when the WebSocket has more than HIGH_WATER bytes queued, every local socket is paused
//   until the queue is below LOW_WATER again (checked as sends complete);
// - in: when a local socket's buffer is full, the WebSocket stops reading until it drains. That
//   stalls every stream of the tunnel for a moment (head-of-line), which is the price of not
//   running per-stream credit windows; database traffic is request/response, so it is rare.
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { encodeData, type StreamMessage } from './protocol.ts';

const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
/** Larger chunks are split so one stream cannot hold the socket for long. */
const MAX_CHUNK = 256 * 1024;

export class Mux {
  private readonly streams = new Map<number, Socket>();
  private readonly blocked = new Set<number>();
  private pausedOut = false;

  constructor(private readonly ws: WebSocket) {}

  /** Open streams. */
  get size(): number {
    return this.streams.size;
  }

  has(id: number): boolean {
    return this.streams.has(id);
  }

  /** Binds `socket` to stream `id`: from now on its bytes and its end travel over the tunnel. */
  attach(id: number, socket: Socket): void {
    this.streams.set(id, socket);
    socket.on('data', (chunk: Buffer) => this.sendData(id, chunk));
    socket.on('end', () => this.control({ type: 'end', stream: id }));
    socket.on('error', () => {}); // reported by 'close' below
    socket.on('close', (hadError) => {
      if (!this.streams.delete(id)) return; // closed because the peer said so
      this.unblock(id);
      this.control({ type: 'close', stream: id, ...(hadError ? { reason: 'connection reset' } : {}) });
    });
    socket.on('drain', () => this.unblock(id));
    if (this.pausedOut) socket.pause();
    else socket.resume();
  }

  /** Bytes that arrived for stream `id`. */
  receive(id: number, payload: Buffer): void {
    const socket = this.streams.get(id);
    if (!socket) return; // a late frame of a stream closed here
    if (!socket.write(payload) && !this.blocked.has(id)) {
      this.blocked.add(id);
      this.ws.pause();
    }
  }

  /** `end` or `close` from the peer. */
  onMessage(msg: StreamMessage): void {
    const socket = this.streams.get(msg.stream);
    if (!socket) return;
    if (msg.type === 'end') {
      socket.end();
      return;
    }
    this.streams.delete(msg.stream);
    this.unblock(msg.stream);
    if (msg.reason) socket.destroy(new Error(msg.reason));
    else socket.end(() => socket.destroy());
  }

  /** Ends every stream with `reason` (the tunnel is gone). */
  destroyAll(reason: string): void {
    const err = new Error(reason);
    for (const [id, socket] of this.streams) {
      this.streams.delete(id);
      socket.destroy(err);
    }
    this.blocked.clear();
  }

  /** Sends a control message; silently dropped once the WebSocket is closing. */
  control(msg: object): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private sendData(id: number, chunk: Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    for (let at = 0; at < chunk.length; at += MAX_CHUNK) {
      this.ws.send(encodeData(id, chunk.subarray(at, at + MAX_CHUNK)), () => this.maybeResumeOut());
    }
    if (!this.pausedOut && this.ws.bufferedAmount > HIGH_WATER) {
      this.pausedOut = true;
      for (const socket of this.streams.values()) socket.pause();
    }
  }

  private maybeResumeOut(): void {
    if (!this.pausedOut || this.ws.bufferedAmount > LOW_WATER) return;
    this.pausedOut = false;
    for (const socket of this.streams.values()) socket.resume();
  }

  private unblock(id: number): void {
    if (!this.blocked.delete(id)) return;
    if (this.blocked.size === 0) this.ws.resume();
  }
}
