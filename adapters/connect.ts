// What every adapter's connect() does before it opens anything: a config that cannot work
// (another engine's, inconsistent SSL settings, unreadable TLS material) yields a pool whose
// calls all fail with the reason, so the caller meets it where it meets connection errors.
import { AdapterError, redactSecrets, secretsOf } from './errors.ts';
import { tlsMaterialProblem } from './ssl.ts';
import type { AdapterName, AdapterPool, ConnectionConfig } from './types.ts';

/** A pool whose every call rejects with `err`. */
export function unusablePool(err: AdapterError): AdapterPool {
  return {
    check: () => Promise.reject(err),
    execute: () => Promise.reject(err),
    readSchema: () => Promise.reject(err),
    close: async () => {},
  };
}

/** `open(config)` when the config is usable for engine `name`, else an unusable pool saying why. */
export function guardedConnect(
  name: AdapterName,
  config: ConnectionConfig,
  open: (config: ConnectionConfig) => AdapterPool,
): AdapterPool {
  if (config.adapter !== name)
    return unusablePool(new AdapterError(`not a ${name} config: ${config.adapter}`, 'config'));
  const problem = tlsMaterialProblem(config.ssl);
  if (problem)
    return unusablePool(
      new AdapterError(redactSecrets(problem.message, secretsOf(config)), 'config', problem.code),
    );
  try {
    return open(config);
  } catch (err) {
    if (err instanceof AdapterError) return unusablePool(err);
    throw err;
  }
}
