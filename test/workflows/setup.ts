import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { type RunningWorker, startWorker } from '../../worker/worker.ts';
import { servers, workflowBundle } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type ChatPeer, startChatPeer } from '../peers/chat.ts';
import { type Receiver, startReceiver } from '../peers/receiver.ts';
import { startTrackerPeer, type TrackerPeer } from '../peers/tracker.ts';

export interface WorkflowEnv {
  svc: TestService;
  worker: RunningWorker | null;
  chat: ChatPeer;
  tracker: TrackerPeer;
  receiver: Receiver;
  /** A registered PostgreSQL database and its default credential. */
  db: { id: string; credentialId: string };
  /** Calls the API with the bootstrap API key (or the given headers); the body is parsed JSON or text. */
  api<T = Problem>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T }>;
  /** Waits until the run has ended (or `until` holds) and returns the run. */
  waitRun(
    workflowId: string,
    runId: string,
    until?: (run: RunView) => boolean,
    timeoutMs?: number,
  ): Promise<RunView>;
  stop(): Promise<void>;
}

/** A problem response (and the loose shape of any other JSON body). */
export interface Problem {
  status: number;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
  [key: string]: unknown;
}

export interface StepView {
  id: string;
  name: string;
  type: string;
  status: string;
  output: Record<string, unknown> | null;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface RunView {
  id: string;
  workflow_id: string;
  status: string;
  trigger: string;
  inputs: Record<string, unknown>;
  error: string | null;
  started_at: string;
  finished_at: string | null;
  steps: StepView[] | null;
  approvals: Array<{ step: string; user_id: string; email: string; decision: string }> | null;
}

export interface WorkflowView {
  id: string;
  name: string;
  group: string | null;
  cron_schedule: string | null;
  trigger_tracker_label: { id: string; name: string } | null;
  inputs: Array<{ key: string; description: string; type: string }>;
  steps: Array<{
    id: string;
    name: string;
    condition: string | null;
    action: Record<string, unknown>;
    permissions: unknown[];
  }>;
  archived_at: string | null;
  [key: string]: unknown;
}

export async function startWorkflowEnv(
  opts: {
    worker?: boolean;
    env?: Record<string, string>;
    /** A Temporal server of the test's own (default: the harness's). */
    temporal?: { address: string; namespace: string };
  } = {},
): Promise<WorkflowEnv> {
  const [chat, tracker, receiver] = await Promise.all([startChatPeer(), startTrackerPeer(), startReceiver()]);
  const svc = await startTestService({
    temporal: opts.temporal ?? true,
    env: {
      CHAT_API_URL: chat.url,
      CHAT_BOT_TOKEN: chat.token,
      TRACKER_API_URL: tracker.url,
      TRACKER_API_KEY: tracker.apiKey,
      TRACKER_WEBHOOK_SECRET: tracker.secret,
      ...(opts.env ?? {}),
    },
  });
  const worker =
    opts.worker === false
      ? null
      : await startWorker(svc.deps, (opts.temporal ?? servers().temporal).address, {
          workflowBundle: workflowBundle(),
        });

  const api: WorkflowEnv['api'] = async (method, path, body, headers) => {
    const res = await svc.fetch(path, {
      method,
      // A Bearer token replaces the API key: the key would win (api/middleware/auth.ts).
      headers: {
        ...(headers?.authorization ? {} : { 'x-api-key': svc.apiKey }),
        'content-type': 'application/json',
        ...(headers ?? {}),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    return { status: res.status, body: (isJson ? JSON.parse(text) : text) as never };
  };

  const pg = servers().postgres;
  const created = await api<{ id: string; credentials: Array<{ id: string }> }>(
    'POST',
    '/api/v1/desk/databases',
    {
      name: 'orders',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    },
  );
  if (created.status !== 201)
    throw new Error(`database registration failed: ${JSON.stringify(created.body)}`);
  const db = { id: created.body.id, credentialId: created.body.credentials[0]!.id };

  const waitRun: WorkflowEnv['waitRun'] = async (workflowId, runId, until, timeoutMs = 30_000) => {
    const ended = (r: RunView) => r.finished_at !== null;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await api<RunView>('GET', `/api/v1/workflows/${workflowId}/runs/${runId}`);
      if (res.status === 200 && (until ?? ended)(res.body)) return res.body;
      if (Date.now() > deadline)
        throw new Error(`run ${runId} did not get there: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  return {
    svc,
    worker,
    chat,
    tracker,
    receiver,
    db,
    api,
    waitRun,
    async stop() {
      await worker?.shutdown();
      await svc.stop();
      await Promise.all([chat.close(), tracker.close(), receiver.close()]);
    },
  };
}

/** Runs the run endpoint and returns the run id from its plain-text answer. */
export async function runWorkflow(
  env: WorkflowEnv,
  workflowId: string,
  inputs: Record<string, unknown> = {},
  headers?: Record<string, string>,
): Promise<string> {
  const res = await env.api('POST', `/api/v1/workflows/${workflowId}/run`, inputs, headers);
  if (res.status !== 200) throw new Error(`run failed: ${res.status} ${JSON.stringify(res.body)}`);
  const m = /(run_[0-9A-Z]{26})/.exec(String(res.body));
  if (!m) throw new Error(`no run id in ${String(res.body)}`);
  return m[1]!;
}

/** A user of the bootstrap organization with a personal token (Bearer), for approvals and manual runs. */
export async function makeUser(
  env: WorkflowEnv,
  role: 'super_admin' | 'admin' | 'member',
  email: string,
): Promise<{ userId: string; bearer: Record<string, string> }> {
  const org = await firstOrganization(env.svc.deps.sql);
  const user = await createUser(env.svc.deps.sql, { orgId: org!.id, email, role, password: null });
  const { secret } = await createPersonalToken(env.svc.deps.sql, {
    userId: user.id,
    name: 'test',
    expiresAt: null,
  });
  return { userId: user.id, bearer: { authorization: `Bearer ${secret}` } };
}
