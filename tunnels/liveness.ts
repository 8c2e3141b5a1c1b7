// Liveness of a WebSocket whose far end may hang rather than close: a process stopped (SIGSTOP),
// frozen or cut off behind a balancer keeps the TCP connection open, so nothing but silence tells.
// The side that depends on the link (the agent on its tunnel, a relaying process on its link to
// the holder) pings every PING_MS; anything received counts as a sign of life (a busy link's data
// frames can delay the pong); SILENCE_MS without one ends the link so the caller reconnects.
// The numbers sum with the holder's lease (agent-status.ts) to the 10 s within which a hung
// holder is routed around: silence noticed after 4-5 s, reconnect and re-routing in the rest.
import type WebSocket from 'ws';

export const PING_MS = 1_000;
export const SILENCE_MS = 4_000;

/** Watches `ws` until it closes; `onSilent` runs once when the far end went quiet (it should terminate). */
export function watchLiveness(ws: WebSocket, onSilent: (silentMs: number) => void): void {
  let heard = Date.now();
  const alive = () => {
    heard = Date.now();
  };
  ws.on('pong', alive);
  ws.on('ping', alive);
  ws.on('message', alive);
  let tick = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    // This process itself stalled (load, a long GC): what arrived meanwhile is still unread, as
    // timers run before I/O; judge the peer on the next tick instead.
    if (now - tick > PING_MS * 2) heard = now;
    tick = now;
    const silent = now - heard;
    if (silent > SILENCE_MS) {
      clearInterval(timer);
      onSilent(silent);
    } else if (ws.readyState === ws.OPEN) ws.ping();
  }, PING_MS);
  timer.unref();
  ws.once('close', () => clearInterval(timer));
}
