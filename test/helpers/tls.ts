/**
 * A self-signed certificate for 127.0.0.1 and localhost, made at test time with the openssl CLI
 * (Debian's openssl, installed by `scripts/setup.mjs --test`). Clients trust it by passing it as
 * their `ca`: verification stays on.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  /** The certificate's PEM, for a client's `ca`. */
  ca: Buffer;
}

/** A new P-256 key (or an RSA 2048 one) and a certificate valid for a day, in files of a fresh temp dir (or `dir`). */
export function makeSelfSignedCertificate(commonName = 'parley-test', dir = mkdtempSync(path.join(tmpdir(), 'parley-tls-')), keyType: 'ec' | 'rsa' = 'ec'): TestCertificate {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const key = keyType === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048'];
  execFileSync('openssl', [
    'req', '-x509', ...key, '-nodes', '-days', '1',
    '-keyout', keyFile, '-out', certFile, '-subj', `/CN=${commonName}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: 'ignore' });
  return { certFile, keyFile, ca: readFileSync(certFile) };
}
