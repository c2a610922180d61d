/**
 * The page's way past the API token: a browser cannot add `Authorization: Bearer` to a page it
 * navigates to, so with a token set the timeline page answers a login form, and the token typed
 * in it once buys a session cookie the page's own /api requests then carry. The cookie is
 * HttpOnly (no script, and so no injected one, reads it), SameSite=Strict (no other site's page
 * makes the browser send it) and Secure over HTTPS. Its value is derived from the token, not the
 * token itself: changing the token ends every session; the cookie never opens /metrics.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';

export const SESSION_COOKIE = 'pgvigil_session';
export const LOGIN_PATH = '/login';
/** A login form is a token and little else. */
const MAX_LOGIN_BODY_BYTES = 4_096;

/** The session cookie's value for `token`. */
export function sessionValue(token: string): string {
  return createHash('sha256').update(`pgvigil session\u0000${token}`, 'utf8').digest('base64url');
}

/** The value of the session cookie in a Cookie header, or '' without one. */
export function sessionCookieOf(header: string | undefined): string {
  if (header === undefined) return '';
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === SESSION_COOKIE) return pair.slice(eq + 1).trim();
  }
  return '';
}

/**
 * POST /login: the form's token, checked by `isToken`; right, the session cookie and back to the
 * page; wrong, the form again with a 401.
 */
export function registerLogin(app: FastifyInstance, options: { token: string; secure: boolean; isToken(given: string): boolean }): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_LOGIN_BODY_BYTES }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const cookie = [`${SESSION_COOKIE}=${sessionValue(options.token)}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ');
  app.post<{ Body: { token?: unknown } }>(LOGIN_PATH, async (request, reply) => {
    const given = typeof request.body?.token === 'string' ? request.body.token.trim() : '';
    if (given === '' || !options.isToken(given)) return sendLoginPage(reply, 'That is not the token in http_token_file.');
    return reply.code(303).header('set-cookie', cookie).header('location', '/').send();
  });
}

/** The login form, with a 401: what an unauthenticated browser gets instead of the page. */
export function sendLoginPage(reply: FastifyReply, message: string | null = null): FastifyReply {
  return reply
    .code(401)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(loginPage(message));
}

function loginPage(message: string | null): string {
  // Self-contained (no /ui asset): the assets sit behind the token too.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>pgvigil: log in</title>
<link rel="icon" href="data:,">
<style>body{font:15px system-ui,sans-serif;margin:4rem auto;max-width:28rem;padding:0 1rem}input{width:100%;box-sizing:border-box;padding:.4rem;margin:.5rem 0}p.error{color:#b00020}</style>
</head>
<body>
<h1>pgvigil</h1>
<form method="post" action="${LOGIN_PATH}">
<label for="token">Token (the first line of http_token_file)</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
${message === null ? '' : `<p class="error" role="alert">${message}</p>`}
</body>
</html>
`;
}
