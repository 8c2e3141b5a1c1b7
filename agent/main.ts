// `countersign agent --server <url> --token <token>`: runs the agent until SIGTERM/SIGINT.
// Logs are JSON lines on stdout; the token never appears in them.
import { parseArgs } from 'node:util';
import { AGENT_VERSION, AgentRefusedError, readCa, startAgent } from './client.ts';

export const AGENT_USAGE = `countersign agent --server <url> --token <token> [--ca <file>] [--drain-seconds N]
  runs an agent: relays the service's database connections inside this network
  (the token may come from COUNTERSIGN_AGENT_TOKEN instead, which keeps it out of the process list;
  --allow-plain-http permits http:// to a non-loopback server, for an already encrypted private link)`;

/** Exit codes: 0 stopped, 2 usage, 3 the service refused the token. */
export async function runAgent(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      ca: { type: 'string' },
      'drain-seconds': { type: 'string' },
      'allow-plain-http': { type: 'boolean', default: false },
    },
  });
  const server = values.server ?? env.COUNTERSIGN_SERVER;
  const token = values.token ?? env.COUNTERSIGN_AGENT_TOKEN;
  if (!server || !token) {
    process.stderr.write(`${AGENT_USAGE}\n`);
    return 2;
  }
  const drain = Number(values['drain-seconds'] ?? 30);
  const log = (event: string, fields: Record<string, unknown> = {}) =>
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), event, ...fields })}\n`);
  let agent: ReturnType<typeof startAgent>;
  try {
    agent = startAgent({
      server,
      token,
      ...(values.ca ? { ca: readCa(values.ca) } : {}),
      drainSeconds: Number.isFinite(drain) && drain >= 0 ? drain : 30,
      allowPlainHttp: values['allow-plain-http'] === true,
      log,
    });
  } catch (err) {
    process.stderr.write(`countersign agent: ${(err as Error).message}\n`);
    return 2;
  }
  log('started', { version: AGENT_VERSION, server: new URL(server).origin });
  const onSignal = () => {
    log('draining');
    void agent.stop();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await agent.done;
    log('stopped');
    return 0;
  } catch (err) {
    if (err instanceof AgentRefusedError) {
      process.stderr.write(`countersign agent: ${err.message}\n`);
      return 3;
    }
    throw err;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
