import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { LoadedDataConverter, WorkerDeploymentVersion } from '@temporalio/common';
import type { Config } from '../config/env.ts';
import { deploymentVersion } from './build-id.ts';

/** Connections to Temporal, shared by the API (start, signal, query) and readiness checks. */
export interface TemporalHandle {
  connection: Connection;
  client: Client;
  namespace: string;
  taskQueue: string;
  /**
   * The Worker Deployment Version of this release: every run this process starts is pinned to it,
   * so only workers of the same release execute it (worker/versioning.ts). Null: versioning off.
   */
  version: WorkerDeploymentVersion | null;
}

/**
 * `dataConverter`: the service's (core/payload-codec.ts), so what the client sends is encrypted and
 * what it reads back decrypted; omitted only by callers that send no payloads (search attributes).
 */
export async function connectTemporal(
  address: string,
  config: Config,
  dataConverter?: LoadedDataConverter,
): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address, interceptors: [retryExceptQueries] });
  const version = await deploymentVersion(config);
  return {
    connection,
    client: new Client({
      connection,
      namespace: config.temporalNamespace,
      ...(dataConverter ? { dataConverter } : {}),
    }),
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    version,
  };
}

const retryAll = makeGrpcRetryInterceptor(defaultGrpcRetryOptions());

/**
 * The SDK's retry interceptor for every call but workflow queries. The API queries a run's live
 * state with a short timeout and falls back to the stored state, so retrying a query (e.g. sent
 * to a dead worker's sticky queue) only leaves timers behind, and a retry timer that fires
 * after the connection closed throws outside any promise.
 */
const retryExceptQueries: Interceptor = (options, nextCall) =>
  options.method_definition.path.endsWith('/QueryWorkflow')
    ? new InterceptingCall(nextCall(options))
    : retryAll(options, nextCall);
