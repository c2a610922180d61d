/**
 * The API's bearer token. Listening on loopback needs none; listening anywhere else needs one
 * (startup fails otherwise). When a token is set it guards every route except /healthz and
 * /metrics (Prometheus scrapes those without credentials).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const OPEN_PATHS = new Set(['/healthz', '/metrics']);
const BEARER = /^bearer\s+/i;

/** Reads a token file (first line, trimmed); errors name the file and what to do. */
export function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`http token file ${path}: cannot read it (${(err as Error).message}); create it with a random token, readable by pgvigil only`, { cause: err });
  }
  const token = text.split('\n')[0]!.trim();
  if (token.length < 16) throw new Error(`http token file ${path}: the token must be at least 16 characters (e.g. openssl rand -hex 32 > ${path})`);
  return token;
}

export function requireBearer(app: FastifyInstance, token: string): void {
  const expected = digest(token);
  app.addHook('onRequest', async (request, reply) => {
    if (OPEN_PATHS.has(request.url.split('?')[0]!)) return;
    const header = request.headers.authorization ?? '';
    // The scheme is case-insensitive (RFC 9110 11.1): `bearer x` is as good as `Bearer x`.
    const scheme = BEARER.exec(header);
    const given = scheme === null ? '' : header.slice(scheme[0].length).trim();
    // Compare digests of equal length so neither the token nor its length leaks through timing.
    if (given !== '' && timingSafeEqual(digest(given), expected)) return;
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({ error: 'unauthorized', message: given === '' ? 'this API needs Authorization: Bearer <token> (the token in http_token_file)' : 'the bearer token is not the one in http_token_file' });
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
