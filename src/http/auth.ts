/**
 * The bearer tokens. The API's: listening on loopback needs none; listening anywhere else needs
 * one (startup fails otherwise). When set it guards every route except /healthz and /metrics.
 * /metrics has its own, off by default since Prometheus scrapes without credentials unless told
 * (`authorization: { credentials_file: ... }`): it holds no statement text, but it does name
 * databases, tables, users and applications. A browser, which cannot send the header, logs in
 * once through a form on the page (login.ts) and carries a session cookie.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { LOGIN_PATH, registerLogin, sendLoginPage, sessionCookieOf, sessionValue } from './login.js';

const BEARER = /^bearer\s+/i;

/** The tokens the app asks for; null: that part is open. */
export interface BearerTokens {
  /** /api, /readyz, the page (http_token_file). */
  api: string | null;
  /** /metrics (http.metrics_token_file). */
  metrics: string | null;
}

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

/**
 * Guards the routes with their tokens. With an API token, the page's login (login.ts) is
 * registered too, and the session cookie it sets opens what the API token opens.
 * @param options.secure the app serves HTTPS: the cookie is sent back over HTTPS only
 */
export function requireBearer(app: FastifyInstance, tokens: BearerTokens, options: { secure: boolean } = { secure: false }): void {
  const api = tokens.api === null ? null : { digest: digest(tokens.api), file: 'http_token_file', session: digest(sessionValue(tokens.api)) };
  const metrics = tokens.metrics === null ? null : { digest: digest(tokens.metrics), file: 'http.metrics_token_file', session: null };
  if (api === null && metrics === null) return;
  if (api !== null) registerLogin(app, { token: tokens.api!, secure: options.secure, isToken: (given) => timingSafeEqual(digest(given), api.digest) });
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    const expected = path === '/healthz' ? null : path === '/metrics' ? metrics : api;
    if (expected === null || (path === LOGIN_PATH && request.method === 'POST')) return;
    const cookie = sessionCookieOf(request.headers.cookie);
    if (expected.session !== null && cookie !== '' && timingSafeEqual(digest(cookie), expected.session)) return;
    const header = request.headers.authorization ?? '';
    // The scheme is case-insensitive (RFC 9110 11.1): `bearer x` is as good as `Bearer x`.
    const scheme = BEARER.exec(header);
    const given = scheme === null ? '' : header.slice(scheme[0].length).trim();
    // Compare digests of equal length so neither the token nor its length leaks through timing.
    if (given !== '' && timingSafeEqual(digest(given), expected.digest)) return;
    // A browser opening the page cannot send the token: it gets the form that sets the cookie.
    if (expected === api && path === '/' && request.method === 'GET' && given === '') return sendLoginPage(reply);
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({ error: 'unauthorized', message: given === '' ? `${path} needs Authorization: Bearer <token> (the token in ${expected.file})` : `the bearer token is not the one in ${expected.file}` });
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
