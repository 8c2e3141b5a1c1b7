import { inject } from 'vitest';

/** TLS material made by the harness: PEM strings. */
export interface TlsMaterial {
  /** CA that signed the server certificate (and the client certificate). */
  caCert: string;
  /** A second CA that signed nothing the servers use: verification against it must fail. */
  otherCaCert: string;
  /** Client certificate and key signed by `caCert`, for the user named `certUser`. */
  clientCert: string;
  clientKey: string;
  /** The server certificate names only this host (DNS SAN), so verify-full against
   *  `wrongHostname` (an IP address of the same server) must fail. */
  rightHostname: string;
  wrongHostname: string;
}

/** One server started by test/harness/global-setup.ts, shared by every test file. */
export interface SqlServer {
  host: string;
  port: number;
  /** A superuser-like account with a password. */
  user: string;
  password: string;
  /** A database that exists and that tests may use freely. */
  database: string;
  /** A user that must log in with a client certificate (and that has no password login over TLS). */
  certUser: string;
  tls: TlsMaterial;
}

export interface TestServers {
  postgres: SqlServer;
  mariadb: SqlServer;
  clickhouse: {
    host: string;
    httpPort: number;
    user: string;
    password: string;
    database: string;
    version: string;
  };
  temporal: { address: string; namespace: string; uiPort: number };
}

declare module 'vitest' {
  export interface ProvidedContext {
    servers: TestServers;
    /** The workflow bundle built once by the global setup: pass it to startWorker. */
    workflowBundle: { code: string };
  }
}

/** The shared servers, inside an integration test. */
export function servers(): TestServers {
  return inject('servers');
}

/** The workflow bundle shared by every test worker in this run. */
export function workflowBundle(): { code: string } {
  return inject('workflowBundle');
}
