/**
 * The timeline page at `/`: a static page (web/ in the package) that reads /api, with uPlot
 * served from the installed package, so nothing comes from a CDN. Guarded like /api by the
 * bearer token when one is set (auth.ts guards every route but /healthz and /metrics); a browser
 * gets a login form instead and then carries a session cookie (login.ts).
 * Files are read once at start-up: a missing asset fails start-up, not a request.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** web/ beside src/ and dist/: the same path from src/http (tests) and dist/http (the package). */
const WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web');
const require = createRequire(import.meta.url);

const ASSETS: ReadonlyArray<{ url: string; file: string; type: string }> = [
  { url: '/', file: path.join(WEB_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  { url: '/ui/timeline.js', file: path.join(WEB_DIR, 'timeline.js'), type: 'text/javascript; charset=utf-8' },
  { url: '/ui/timeline.css', file: path.join(WEB_DIR, 'timeline.css'), type: 'text/css; charset=utf-8' },
  { url: '/ui/uPlot.iife.min.js', file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  { url: '/ui/uPlot.min.css', file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
];

export function registerTimelinePage(app: FastifyInstance): void {
  for (const { url, file, type } of ASSETS) {
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch (err) {
      throw new Error(`timeline page: cannot read ${file} (${(err as Error).message}); the package is incomplete, reinstall pgvigil`, { cause: err });
    }
    app.get(url, async (_request, reply) => reply.type(type).header('cache-control', 'no-cache').send(body));
  }
}
