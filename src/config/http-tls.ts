/**
 * http.tls: the certificate and key pgvigil's HTTP server serves HTTPS with. Read and checked at
 * startup (readable, PEM, the key belonging to the certificate) so a wrong file stops startup with
 * its path and the fix, not the first browser visit.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { ConfigProblem } from './config-error.js';

export interface HttpTls {
  /** PEM: the certificate, then any intermediates. */
  cert: string;
  /** PEM private key. */
  key: string;
}

export function resolveHttpTls(raw: { cert_file: string; key_file: string } | null, problems: ConfigProblem[]): HttpTls | null {
  if (raw === null) return null;
  const read = (field: 'cert_file' | 'key_file'): string | null => {
    try {
      return readFileSync(raw[field], 'utf8');
    } catch (err) {
      problems.push({ path: `http.tls.${field}`, message: `cannot read it: ${(err as Error).message}`, value: raw[field] });
      return null;
    }
  };
  const cert = read('cert_file');
  const key = read('key_file');
  if (cert === null || key === null) return null;
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    problems.push({
      path: 'http.tls',
      message: `the certificate and key do not make a TLS server (${(err as Error).message}): give PEM files, the key of that certificate, not encrypted`,
      value: `${raw.cert_file}, ${raw.key_file}`,
    });
    return null;
  }
  return { cert, key };
}
