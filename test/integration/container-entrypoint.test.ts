/**
 * The container as its Dockerfile starts it, without Docker (no engine runs here): the runtime
 * stage's ENV and ENTRYPOINT/CMD run as they are, from the files its COPY lines bring, with only
 * the port and the store's directory moved so the test owns them, and the server given as the
 * documented `docker run -e PGVIGIL_DSN=...` gives it. It must start and serve /metrics on
 * 0.0.0.0 for Prometheus, and the API to this host only while no token is set.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const dir = suiteTempDir('container');
const dockerfile = readFileSync('Dockerfile', 'utf8').replace(/\\\n\s*/g, ' ');
const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

function instruction(name: string): string[] {
  return runtime.split('\n').filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim());
}

const env = Object.fromEntries(instruction('ENV').flatMap((l) => [...l.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));
const entrypoint = JSON.parse(instruction('ENTRYPOINT')[0]!) as string[];
const cmd = JSON.parse(instruction('CMD')[0]!) as string[];

describe('the container, as the Dockerfile runs it', () => {
  it('copies every file the runtime needs, from paths that exist', () => {
    const copied = instruction('COPY').filter((l) => !l.startsWith('--from')).map((l) => l.split(/\s+/)[0]!);
    for (const path of copied) expect(existsSync(path), path).toBe(true);
    // What pgvigil reads at run time from beside dist/: the page, the translation catalogs, the example config.
    expect(copied).toEqual(expect.arrayContaining(['bin', 'catalogs', 'web', 'config']));
    expect(dockerfile).toMatch(/npm prune --omit=dev --omit=optional/);
  });

  it('starts with its own ENV and command, serves /metrics on 0.0.0.0 and the API to this host only', async () => {
    expect(env.PGVIGIL_LISTEN).toMatch(/^0\.0\.0\.0:\d+$/);
    const port = await freePort();
    const args = [...entrypoint.slice(1).map((a) => a.replace(/^\/app\//, '')), ...cmd];
    const child = spawn(entrypoint[0]!, args, {
      env: {
        PATH: process.env.PATH, ...env,
        PGVIGIL_LISTEN: env.PGVIGIL_LISTEN!.replace(/:\d+$/, `:${port}`),
        PGVIGIL_DB: join(dir, 'pgvigil.db'),
        PGVIGIL_DSN: `postgres://pgvigil@127.0.0.1:${await freePort()}/postgres`,
      },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => { stderr += t; });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null))?.status === 200, 30_000, '/metrics served');
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^pgvigil_build_info\{/m);
      expect(stderr).toContain('the API, /readyz and the page to this host only (as localhost), until http_token_file is set');
      expect((await fetch(`http://127.0.0.1:${port}/api/alerts`, { headers: { host: `localhost:${port}` } })).status).toBe(200);
      // The HEALTHCHECK, with the port moved as above.
      const health = JSON.parse(instruction('HEALTHCHECK')[0]!.replace(/^.*?CMD /, '')) as string[];
      const probe = spawn(health[0]!, health.slice(1).map((a) => a.replace(':9899/', `:${port}/`)));
      expect(await new Promise((resolve) => probe.on('exit', resolve))).toBe(0);
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
