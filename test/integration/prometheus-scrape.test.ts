/**
 * A real Prometheus (Debian prometheus) started on loopback scrapes a running pgvigil that
 * watches a PostgreSQL 18 server: the scrape is healthy and queries return pgvigil's series.
 * It scrapes through a recording proxy, which shows it asked for gzip and got it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { destroyAllServers, startPrimary } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool, toolPath } from '../helpers/tools.js';
import { startOutputs, type OutputsRig } from './metrics-real-feed.js';

interface QueryResult { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } }
interface TargetsResult { data: { activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> } }

interface Exchange { acceptEncoding: string | undefined; contentEncoding: string | undefined }

/** Passes requests to `upstream` unchanged, bytes and headers, and records each exchange's encodings. */
async function recordingProxy(upstream: string, exchanges: Exchange[]): Promise<{ host: string; close(): void }> {
  const server = http.createServer((request, response) => {
    const forwarded = http.request(new URL(request.url ?? '/', upstream), { method: request.method, headers: request.headers }, (answer) => {
      exchanges.push({ acceptEncoding: request.headers['accept-encoding'], contentEncoding: answer.headers['content-encoding'] });
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { host: `127.0.0.1:${port}`, close: () => server.close() };
}

describeWithTool('prometheus', 'Prometheus scraping pgvigil', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-prometheus-'));
  let rig: OutputsRig;
  let proxy: Awaited<ReturnType<typeof recordingProxy>> | undefined;
  const exchanges: Exchange[] = [];
  let prometheus: ChildProcess;
  let prometheusLog = '';
  let promUrl = '';

  beforeAll(async () => {
    const primary = await startPrimary({ version: 18 });
    await primary.query('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders SELECT generate_series(1, 1000); DELETE FROM orders WHERE id <= 100');
    rig = await startOutputs([{ name: 'primary', server: primary }], path.join(dir, 'pgvigil.db'));
    proxy = await recordingProxy(rig.url, exchanges);
    writeFileSync(path.join(dir, 'prometheus.yml'), [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: pgvigil',
      '    static_configs:',
      `      - targets: ['${proxy.host}']`,
    ].join('\n'));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(toolPath('prometheus'), [
      `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stderr!.on('data', (c: Buffer) => { prometheusLog += c.toString(); });
    await waitUntil(async () => (await fetch(`${promUrl}/-/ready`)).ok, 30_000, 'Prometheus ready').catch((err: Error) => {
      throw new Error(`${err.message}; its log: ${prometheusLog}`);
    });
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    proxy?.close();
    await rig?.stop();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  const query = async (promql: string) =>
    ((await (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as QueryResult).data.result;

  it('scrapes pgvigil without errors and answers queries on its series', async () => {
    let target: TargetsResult['data']['activeTargets'][number] | undefined;
    await waitUntil(async () => {
      const body = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as TargetsResult;
      target = body.data.activeTargets.find((a) => a.labels.job === 'pgvigil');
      return target !== undefined && target.health !== 'unknown';
    }, 30_000, 'a first scrape of pgvigil');
    expect(target).toMatchObject({ health: 'up', lastError: '' });

    let build: QueryResult['data']['result'] = [];
    await waitUntil(async () => (build = await query('pgvigil_build_info')).length > 0, 30_000, 'pgvigil_build_info in Prometheus');
    expect(build[0]!.metric).toMatchObject({ __name__: 'pgvigil_build_info', job: 'pgvigil', version: 'test' });
    let dead: QueryResult['data']['result'] = [];
    await waitUntil(async () => (dead = await query('pg_stat_user_tables_n_dead_tup{relname="orders"}')).length > 0, 30_000, 'n_dead_tup of orders in Prometheus');
    expect(dead[0]!.metric).toMatchObject({ target: 'primary', datname: 'postgres', schemaname: 'public' });
    expect(await query('pg_up{target="primary"} == 1')).toHaveLength(1);
    // Prometheus asks for gzip and pgvigil sends it: the scrapes above read gzip'd bodies.
    expect(exchanges.length).toBeGreaterThan(0);
    expect(exchanges.every((e) => e.acceptEncoding === 'gzip' && e.contentEncoding === 'gzip')).toBe(true);
  });
});
