// TLS material for the harness, made with the openssl CLI: a CA, an unrelated second CA, a server
// certificate that names only DNS:localhost, and a client certificate for the certificate user.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findExecutable, MissingBinaryError, run } from './process.ts';
import type { TlsMaterial } from './servers.ts';

/** The TLS material in PEM, plus the files the servers load. */
export interface TlsFiles {
  material: TlsMaterial;
  caCertFile: string;
  serverCertFile: string;
  serverKeyFile: string;
}

// The server certificate's only SAN is DNS:localhost. Per RFC 6125 §6.4.4 a client must not fall
// back to the CN once a SAN is present, and an IP address is matched only against IP SANs, so
// verify-full to 127.0.0.1 fails while localhost succeeds.
const RIGHT_HOSTNAME = 'localhost';
const WRONG_HOSTNAME = '127.0.0.1';

// Own config file, so the result does not depend on the system's openssl.cnf defaults.
const OPENSSL_CNF = `[req]
distinguished_name = dn
prompt = no
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:${RIGHT_HOSTNAME}
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
`;

/** Makes the CAs and certificates in `dir`; the client certificate's CN is `certUser`. */
export async function makeTls(dir: string, certUser: string): Promise<TlsFiles> {
  const openssl = findExecutable(['openssl']);
  if (!openssl) throw new MissingBinaryError('openssl not found on PATH: apt-get install openssl');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const cnf = join(dir, 'openssl.cnf');
  await writeFile(cnf, OPENSSL_CNF);
  const logFile = join(dir, 'openssl.log');
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => run(openssl, args, { logFile, cwd: dir });

  // EC P-256 keys: generated in milliseconds, and every server and driver here accepts them.
  const key = (name: string) =>
    ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f(name));
  const selfSigned = (name: string, cn: string) =>
    ssl(
      'req',
      '-config',
      cnf,
      '-x509',
      '-new',
      '-key',
      f(`${name}.key`),
      '-subj',
      `/CN=${cn}`,
      '-days',
      '3650',
      '-extensions',
      'ca',
      '-out',
      f(`${name}.crt`),
    );
  const signed = async (name: string, cn: string, ext: string) => {
    await ssl(
      'req',
      '-config',
      cnf,
      '-new',
      '-key',
      f(`${name}.key`),
      '-subj',
      `/CN=${cn}`,
      '-out',
      f(`${name}.csr`),
    );
    await ssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      cnf,
      '-extensions',
      ext,
      '-out',
      f(`${name}.crt`),
    );
  };

  await Promise.all(['ca.key', 'other-ca.key', 'server.key', 'client.key'].map(key));
  await Promise.all([
    selfSigned('ca', 'Countersign Test CA'),
    selfSigned('other-ca', 'Countersign Unrelated CA'),
  ]);
  // Sequential: both read and update the CA's serial file.
  await signed('server', 'Countersign Test Server', 'server');
  await signed('client', certUser, 'client');

  const read = (name: string) => readFile(f(name), 'utf8');
  return {
    material: {
      caCert: await read('ca.crt'),
      otherCaCert: await read('other-ca.crt'),
      clientCert: await read('client.crt'),
      clientKey: await read('client.key'),
      rightHostname: RIGHT_HOSTNAME,
      wrongHostname: WRONG_HOSTNAME,
    },
    caCertFile: f('ca.crt'),
    serverCertFile: f('server.crt'),
    serverKeyFile: f('server.key'),
  };
}
