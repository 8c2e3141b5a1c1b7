// docker-compose.yml without Docker (none runs here): the file is read as Compose would read it,
// its set-up is checked for what Temporal's current recommendation and the service need, and its
// `api` and `worker` services are started as the processes their containers would run — the
// Dockerfile's ENTRYPOINT plus each service's command, with the service's environment — against
// the test's PostgreSQL and a Temporal server started with the compose file's dynamic config and
// without the service's search attributes, as a fresh cluster comes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LATENCY_DYNAMIC_CONFIG } from '../../cli/temporal-latency.ts';
import { generateKey } from '../../store/crypto.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { type StartedTemporal, startTemporal } from '../harness/temporal.ts';
import { customAttributes, exitCode, runOneWorkflow, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Service {
  image?: string;
  build?: string;
  command?: string[] | string;
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}

/** Compose's variable interpolation: ${VAR}, ${VAR:-default}, ${VAR:?error}, and $$ for a `$`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (whole, name, op, arg) => {
    if (whole === '$$') return '$';
    const set = vars[name];
    if (set !== undefined && set !== '') return set;
    if (op === '-') return arg;
    if (op === '?') throw new Error(`compose refuses to start: ${arg}`);
    return '';
  });
}

let compose: { services: Record<string, Service> };
let entrypoint: string[];
beforeAll(async () => {
  // merge: the file shares the Temporal store settings through a `<<` merge key.
  compose = parse(await readFile(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
  entrypoint = JSON.parse(/^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)![1]!);
});

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const clean of cleanups.reverse()) await clean().catch(() => {});
});

describe('docker-compose.yml', () => {
  it('sets Temporal up as Temporal recommends: schema by admin-tools, the plain server, then the namespace', async () => {
    const s = compose.services;
    expect(s.temporal!.image).toMatch(/^temporalio\/server:/);
    expect(Object.values(s).some((x) => x.image?.startsWith('temporalio/auto-setup'))).toBe(false);
    const schema = s['temporal-schema']!;
    expect(schema.image).toMatch(/^temporalio\/admin-tools:/);
    const script = [schema.command].flat().join('\n');
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d'])
      expect(script).toContain(`$$tool ${step}`);
    expect(script).toContain('temporal-sql-tool --plugin $$DB');
    // The server and the schema step talk to the same database with the same settings.
    for (const key of ['DB', 'POSTGRES_SEEDS', 'POSTGRES_USER', 'DBNAME', 'VISIBILITY_DBNAME'])
      expect(schema.environment![key], key).toBe(s.temporal!.environment![key]);
    expect(s.temporal!.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(s['temporal-namespace']!.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    for (const app of ['api', 'worker']) {
      expect(s[app]!.depends_on, app).toMatchObject({
        postgres: { condition: 'service_healthy' },
        'temporal-namespace': { condition: 'service_completed_successfully' },
      });
      // The namespace the service uses is the one the set-up creates.
      const ns = String(s[app]!.environment!.TEMPORAL_NAMESPACE);
      expect([s['temporal-namespace']!.command].flat().join('\n')).toContain(`namespace create -n ${ns}`);
    }
    // One role per service, neither the superuser: the store admits only Countersign.
    const db = s.postgres!.environment!;
    const vars = {};
    expect(interpolate(String(s.api!.environment!.DATABASE_URL), vars)).toBe(
      `postgres://countersign:${interpolate(String(db.COUNTERSIGN_DB_PASSWORD), vars)}@postgres:5432/countersign`,
    );
    expect(s.temporal!.environment!.POSTGRES_USER).toBe('temporal');
    expect(interpolate(String(s.temporal!.environment!.POSTGRES_PWD), vars)).toBe(
      interpolate(String(db.TEMPORAL_DB_PASSWORD), vars),
    );
    expect(db.POSTGRES_USER).not.toBe('countersign');
    const init = await readFile(join(ROOT, 'deploy/postgres/init-roles.sh'), 'utf8');
    expect(s.postgres!.volumes).toContain(
      './deploy/postgres/init-roles.sh:/docker-entrypoint-initdb.d/10-roles.sh:ro',
    );
    expect(init).toContain('create database countersign owner countersign');
    expect(init).toContain('create role temporal login createdb');
  });

  it('has health checks and restart policies for the long-running services', () => {
    const s = compose.services;
    for (const name of ['postgres', 'temporal', 'api', 'worker'])
      expect((s[name] as { healthcheck?: unknown }).healthcheck, name).toBeDefined();
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'api', 'worker'])
      expect((s[name] as { restart?: string }).restart, name).toBe('unless-stopped');
    // The API's health check is its readiness; the worker's is its own endpoint's.
    expect(JSON.stringify((s.api as { healthcheck?: unknown }).healthcheck)).toContain('/readyz');
    expect(String(s.worker!.environment!.WORKER_HTTP_PORT)).toBe('9090');
    expect(JSON.stringify((s.worker as { healthcheck?: unknown }).healthcheck)).toContain(':9090/readyz');
  });

  it('gives Temporal the dynamic config the service relies on for latency', async () => {
    const temporal = compose.services.temporal!;
    const target = String(temporal.environment!.DYNAMIC_CONFIG_FILE_PATH);
    const mount = temporal.volumes!.map((v) => v.split(':')).find(([, inside]) => inside === target);
    expect(mount, `a volume mounted at ${target}`).toBeDefined();
    expect(await composeDynamicConfig()).toEqual(LATENCY_DYNAMIC_CONFIG);
  });

  it('runs a workflow with api and worker started from its commands and environment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'countersign-compose-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // A fresh cluster: none of the service's search attributes; the compose file's dynamic config.
    const temporal: StartedTemporal = await startTemporal({
      dir,
      port: await freePort(),
      uiPort: await freePort(),
      searchAttributes: false,
      dynamicConfig: await composeDynamicConfig(),
    });
    cleanups.push(() => temporal.process.stop('SIGKILL'));
    const store: TestStore = await createTestStore();
    cleanups.push(() => store.drop());
    const port = await freePort();
    const workerPort = await freePort();

    // One key for both, as the shared environment gives them (`:?` in the file: compose refuses without).
    const sharedKey = generateKey();
    // Compose's service names and published ports, as this machine reaches them.
    const hosts: Record<string, string> = {
      'temporal:7233': temporal.server.address,
      'api:3000': `127.0.0.1:${port}`,
      'localhost:3000': `127.0.0.1:${port}`,
      '127.0.0.1:3000': `127.0.0.1:${port}`,
      '127.0.0.1:9090': `127.0.0.1:${workerPort}`,
    };
    const environment = (service: string): NodeJS.ProcessEnv => {
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
      const vars = { COUNTERSIGN_ENCRYPTION_KEY: sharedKey };
      for (const [key, raw] of Object.entries(compose.services[service]!.environment!)) {
        let value = interpolate(String(raw), vars);
        for (const [from, to] of Object.entries(hosts)) value = value.replaceAll(from, to);
        env[key] = value;
      }
      // The compose URL names the postgres service (checked above); here it is the test's server.
      env.DATABASE_URL = store.url;
      env.PORT = String(port);
      if (env.WORKER_HTTP_PORT) env.WORKER_HTTP_PORT = String(workerPort);
      return env;
    };
    const start = (service: string) => {
      const command = [compose.services[service]!.command!].flat();
      const [program, ...args] = [...entrypoint, ...command];
      expect(program).toBe('node');
      const child = spawn(process.execPath, [...args], {
        cwd: ROOT,
        env: environment(service),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr!.on('data', (d: Buffer) => {
        out += d.toString();
      });
      children.push(child);
      return { child, out: () => out };
    };

    const api = start('api');
    const worker = start('worker');
    const url = `http://127.0.0.1:${port}`;
    // First start of an empty store: the API key is printed once, to the api's terminal.
    const apiKey = await until('the first API key', async () => /API key: +(cskey_\S+)/.exec(api.out())?.[1]);
    const status = await runOneWorkflow(url, apiKey, { name: 'compose check' });
    expect(status, `api:\n${api.out().slice(-2000)}\nworker:\n${worker.out().slice(-2000)}`).toBe(
      'succeeded',
    );
    expect(await customAttributes(temporal.server)).toMatchObject({
      CountersignWorkflowId: expect.anything(),
      CountersignOrgId: expect.anything(),
    });
    // Each health check, run as the container would run it (the image has node, not curl).
    for (const service of ['api', 'worker']) {
      const test = (compose.services[service] as { healthcheck?: { test: string[] } }).healthcheck!.test;
      expect(test.slice(0, 2), service).toEqual(['CMD', 'node']);
      let [script, target] = test.slice(2) as [string, string];
      for (const [from, to] of Object.entries(hosts)) target = target.replaceAll(from, to);
      const check = spawn(process.execPath, [join(ROOT, script), target], { stdio: 'ignore' });
      expect(await exitCode(check), `${service} health check against ${target}`).toBe(0);
    }
    worker.child.kill('SIGTERM');
    api.child.kill('SIGTERM');
    expect(await exitCode(worker.child)).toBe(0);
    expect(await exitCode(api.child)).toBe(0);
  }, 180_000);
});

/** The dynamic config file the temporal service mounts, as key → value. */
async function composeDynamicConfig(): Promise<Record<string, number | boolean | string>> {
  const temporal = compose.services.temporal!;
  const target = String(temporal.environment!.DYNAMIC_CONFIG_FILE_PATH);
  const [source] = temporal.volumes!.map((v) => v.split(':')).find(([, inside]) => inside === target)!;
  const file = parse(await readFile(join(ROOT, source!), 'utf8')) as Record<string, Array<{ value: never }>>;
  return Object.fromEntries(Object.entries(file).map(([key, entries]) => [key, entries[0]!.value]));
}
