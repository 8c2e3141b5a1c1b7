import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Config } from '../config/env.ts';

/** Connections to Temporal, shared by the API (start, signal, query) and readiness checks. */
export interface TemporalHandle {
  connection: Connection;
  client: Client;
  namespace: string;
  taskQueue: string;
}

export async function connectTemporal(address: string, config: Config): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address, interceptors: [retryExceptQueries] });
  return {
    connection,
    client: new Client({ connection, namespace: config.temporalNamespace }),
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
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
