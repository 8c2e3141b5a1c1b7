import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

// The Helm chart under deploy/helm/: `helm lint` passes and `helm template` renders what a
// production install needs (test/setup-deps.sh builds Helm into ~/.cache/countersign/bin).
const CHART = fileURLToPath(new URL('../../deploy/helm/countersign', import.meta.url));
const HELM = [process.env.HELM_PATH, join(homedir(), '.cache/countersign/bin/helm')].find(
  (p): p is string => !!p && existsSync(p),
);
const run = promisify(execFile);
const required = [
  '--set',
  'store.url=postgres://cs:pw@db:5432/countersign',
  '--set',
  `encryptionKey=${'A'.repeat(43)}=`,
];

interface Manifest {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are checked field by field.
  spec: any;
}

async function render(args: string[] = []): Promise<Manifest[]> {
  const { stdout } = await run(HELM!, ['template', 'cs', CHART, ...required, ...args]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest)
    .filter(Boolean);
}

const container = (m: Manifest) => m.spec.template.spec.containers[0];
const env = (m: Manifest, name: string) =>
  (container(m).env as Array<{ name: string; value?: string; valueFrom?: unknown }>).find(
    (e) => e.name === name,
  );

describe('Helm chart', () => {
  it('is found (test/setup-deps.sh builds it)', () => {
    expect(HELM, 'no helm binary: run bash test/setup-deps.sh').toBeDefined();
  });

  it('passes helm lint', async () => {
    const { stdout } = await run(HELM!, ['lint', CHART, ...required]);
    expect(stdout).toContain('0 chart(s) failed');
  });

  it('renders the API with probes, a drain-sized grace period, a PDB and its own pod address', async () => {
    const all = await render([
      '--set',
      'api.shutdown.delaySeconds=7',
      '--set',
      'api.shutdown.graceSeconds=30',
    ]);
    const api = all.find((m) => m.kind === 'Deployment' && m.metadata.name === 'cs-countersign-api')!;
    expect(container(api).args).toEqual(['serve']);
    expect(container(api).readinessProbe.httpGet.path).toBe('/readyz');
    expect(container(api).livenessProbe.httpGet.path).toBe('/healthz');
    expect(api.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(7 + 30);
    expect(env(api, 'SHUTDOWN_DELAY_SECONDS')?.value).toBe('7');
    expect(env(api, 'SHUTDOWN_GRACE_SECONDS')?.value).toBe('30');
    expect(env(api, 'POD_IP')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    expect(env(api, 'COUNTERSIGN_INTERNAL_URL')?.value).toBe('http://$(POD_IP):3000');
    expect(env(api, 'HOST')?.value).toBe('0.0.0.0');
    // Secrets come from the Secret, never inline.
    expect(env(api, 'DATABASE_URL')?.value).toBeUndefined();
    expect(env(api, 'COUNTERSIGN_ENCRYPTION_KEY')?.valueFrom).toMatchObject({
      secretKeyRef: { key: 'COUNTERSIGN_ENCRYPTION_KEY' },
    });
    const pdbs = all.filter((m) => m.kind === 'PodDisruptionBudget');
    expect(pdbs.map((p) => p.spec.selector.matchLabels['app.kubernetes.io/component']).sort()).toEqual([
      'api',
      'worker',
    ]);
    expect(all.some((m) => m.kind === 'Service' && m.spec.ports[0].targetPort === 'http')).toBe(true);
  });

  it('renders the worker with its HTTP endpoint probed, and the migration Job as a pre-upgrade hook', async () => {
    const all = await render();
    const worker = all.find((m) => m.kind === 'Deployment' && m.metadata.name === 'cs-countersign-worker')!;
    expect(container(worker).args).toEqual(['worker']);
    expect(env(worker, 'WORKER_HTTP_PORT')?.value).toBe('9090');
    expect(container(worker).readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    const job = all.find((m) => m.kind === 'Job' && m.metadata.name === 'cs-countersign-migrate')!;
    expect(container({ ...job, spec: job.spec }).args).toEqual(['migrate']);
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const secret = all.find((m) => m.kind === 'Secret')!;
    expect(secret.metadata.annotations?.['helm.sh/hook-weight']).toBe('-10');
  });

  it('versions the workers and promotes the release after install, upgrade and rollback', async () => {
    const all = await render();
    for (const name of ['cs-countersign-api', 'cs-countersign-worker']) {
      const d = all.find((m) => m.kind === 'Deployment' && m.metadata.name === name)!;
      expect(env(d, 'WORKER_VERSIONING')?.value).toBe('auto');
      expect(env(d, 'TEMPORAL_DEPLOYMENT_NAME')?.value).toBe('countersign');
    }
    const promote = all.find((m) => m.kind === 'Job' && m.metadata.name === 'cs-countersign-promote')!;
    expect(container(promote).args).toEqual(['worker', 'promote', '--wait-seconds', '600']);
    expect(promote.metadata.annotations?.['helm.sh/hook']).toBe('post-install,post-upgrade,post-rollback');
    const off = await render(['--set', 'temporal.workerVersioning=off']);
    expect(off.some((m) => m.metadata.name === 'cs-countersign-promote')).toBe(false);
  });

  it('uses an existing Secret when given one, and refuses to render without store or key', async () => {
    const { stdout } = await run(HELM!, ['template', 'cs', CHART, '--set', 'existingSecret=mine']);
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as Manifest);
    expect(docs.some((m) => m.kind === 'Secret')).toBe(false);
    expect(stdout).toContain('name: mine');
    await expect(run(HELM!, ['template', 'cs', CHART])).rejects.toThrow(
      /store.url \(or existingSecret\) is required/,
    );
  });
});
