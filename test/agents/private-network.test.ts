// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdapter } from '../../adapters/index.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv } from '../workflows/setup.ts';
import { type AgentProcess, registerAgent, startAgentProcess, waitConnected } from './agent-process.ts';
import { ACCOUNT, netnsProblem, PORTS, type PrivateNetwork, startPrivateNetwork } from './netns.ts';

// Done for real: PostgreSQL and MariaDB in a network namespace the service has no route
// into, an agent process inside it, and the service reaching them only through the agent's
// tunnel (check-connection, a query, a workflow query step, all with SSL verify-full).
const problem = netnsProblem();
// DESIGN.md: a test that needs something missing fails under CI and says what; locally it skips.
if (problem && process.env.CI === 'true') throw new Error(`network namespaces are needed here: ${problem}`);

describe.skipIf(problem !== null)('databases in a private network, reached through an agent', () => {
  let net: PrivateNetwork;
  let env: WorkflowEnv;
  let edge: { id: string; token: string };
  let agent: AgentProcess;
  const ids: Record<string, { id: string; credentialId: string }> = {};
  const startAgent = () =>
    startAgentProcess(
      `http://${net.hostIp}:${env.svc.api.port}`,
      edge.token,
      ['--allow-plain-http'],
      net.exec,
    );

  beforeAll(async () => {
    net = await startPrivateNetwork();
    // The service listens on the host end of the link, the only address the agent can reach.
    env = await startWorkflowEnv({ env: { HOST: net.hostIp } });
    edge = await registerAgent(env.svc, 'lan-1');
    agent = startAgent();
    await waitConnected(env.svc, edge.id);
    for (const [engine, adapter, database] of [
      ['postgres', 'postgres', 'postgres'],
      ['mariadb', 'mysql', ACCOUNT.database],
    ] as const) {
      const res = await env.api<{ id: string; credentials: Array<{ id: string }> }>(
        'POST',
        '/api/v1/desk/databases',
        {
          name: `${engine}-in-the-lan`,
          adapter,
          hostname: net.tls.material.rightHostname,
          port: PORTS[engine],
          database,
          ssl: true,
          ssl_ca_cert: Buffer.from(net.tls.material.caCert).toString('base64'),
          verify_server_hostname: true,
          agent_id: edge.id,
          credentials: [{ username: ACCOUNT.user, password: ACCOUNT.password, default_credential: true }],
        },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids[engine] = { id: res.body.id, credentialId: res.body.credentials[0]!.id };
    }
  });
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await env?.stop();
    await net?.stop();
  });

  const query = (engine: string, statement: string) =>
    env.api<{ result?: { rows: unknown[][] }; detail?: string }>('POST', '/api/v1/desk/query-requests', {
      database_id: ids[engine]!.id,
      statement,
    });

  it('the service itself has no path to the databases', async () => {
    const direct = postgresAdapter.connect({
      adapter: 'postgres',
      hostname: net.tls.material.rightHostname,
      port: PORTS.postgres,
      database: 'postgres',
      username: ACCOUNT.user,
      password: ACCOUNT.password,
      ssl: {
        enabled: true,
        caCert: net.tls.material.caCert,
        verifyServerHostname: true,
        clientCert: null,
        clientKey: null,
      },
      timeoutSeconds: 3,
    });
    await expect(direct.check()).rejects.toThrow(/ECONNREFUSED|certificate|connect/i);
    await direct.close();
  });

  for (const engine of ['postgres', 'mariadb'] as const) {
    it(`check-connection to ${engine} answers ok through the agent (verify-full)`, async () => {
      const res = await env.api<string>(
        'GET',
        `/api/v1/desk/databases/${ids[engine]!.id}/check-connection/${ACCOUNT.user}`,
      );
      expect(res.body).toBe('ok');
    });
  }

  it('runs governed queries on both, over TLS', async () => {
    const pg = await query(
      'postgres',
      'select ssl, host(inet_server_addr()) from pg_stat_ssl where pid = pg_backend_pid()',
    );
    expect(pg.status, JSON.stringify(pg.body)).toBe(200);
    expect(pg.body.result!.rows).toEqual([[true, '127.0.0.1']]);
    const maria = await query(
      'mariadb',
      "select variable_value <> '' from information_schema.session_status where variable_name = 'Ssl_cipher'",
    );
    expect(maria.status, JSON.stringify(maria.body)).toBe(200);
    expect(maria.body.result!.rows.map((r) => r.map(Number))).toEqual([[1]]);
  });

  it('runs a workflow query step through the agent', async () => {
    const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Count in the LAN',
      steps: [
        {
          name: 'count',
          action: {
            __type__: 'query',
            credential_id: ids.mariadb!.credentialId,
            query: 'select count(*) from information_schema.schemata',
            timeout_seconds: 10,
          },
        },
        {
          name: 'some',
          action: {
            __type__: 'condition',
            expression: '${step.count.output.rows[0][0]} > 0',
            on_false: 'fail',
          },
        },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const run = await env.waitRun(wf.body.id, await runWorkflow(env, wf.body.id));
    expect(run.status, JSON.stringify(run)).toBe('succeeded');
  });

  it('a killed agent fails the running query, and the restarted one carries the next', async () => {
    const slow = query('postgres', 'select pg_sleep(5)');
    await new Promise((r) => setTimeout(r, 500));
    agent.child.kill('SIGKILL');
    const failed = await slow;
    expect(failed.status).toBe(422);
    expect(failed.body.detail).toContain(`agent "lan-1" (${edge.id}) disconnected`);
    agent = startAgent();
    await waitConnected(env.svc, edge.id);
    const next = await query('postgres', 'select 1');
    expect(next.status, JSON.stringify(next.body)).toBe(200);
  });
});
