/**
 * `pgvigil check`: validates the config and every connection pgvigil will need, one line per
 * aspect with what is wrong and how to fix it. Exit 0 when nothing failed, 1 otherwise.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import type { Config, Target } from '../config/load-config.js';
import { isLoopback } from '../lib/listen-address.js';
import { clientConfigFor, connectionHint, describeConnection } from '../lib/pg-connection.js';
import { openStore } from '../store/open-store.js';
import { checkLogFile } from './check-log-file.js';
import { type CheckResult } from './check-results.js';
import { judgeLogSettings } from './server-settings-check.js';
import { describeServerLanguage, languageOfServer, LOCALE_DIR_SETTING, readLocaleDir } from '../sources/server-language.js';

const SETTINGS_SQL = `SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('log_destination', 'log_line_prefix',
  'log_autovacuum_min_duration', 'log_autoanalyze_min_duration', 'log_lock_waits', 'log_recovery_conflict_waits', 'lc_messages',
  'log_statement', 'log_checkpoints')`;

export async function runChecks(config: Config): Promise<CheckResult[]> {
  const results: CheckResult[] = [{ aspect: 'config', state: 'ok', message: `${config.source} is valid` }];
  results.push(checkStore(config.dbPath));
  results.push(await checkListen(config));
  for (const target of config.targets) {
    results.push(...(await checkTarget(target)));
    results.push(await checkLogFile(target));
  }
  return results;
}

function checkStore(dbPath: string): CheckResult {
  const file = resolve(dbPath);
  if (!existsSync(file)) {
    const dir = dirname(file);
    try {
      accessSync(existsSync(dir) ? dir : dirname(dir), constants.W_OK);
      return { aspect: 'store', state: 'ok', message: `${file} will be created` };
    } catch {
      return { aspect: 'store', state: 'fail', message: `cannot create ${file}: ${dir} is not writable`, hint: 'choose another file with --db or PGVIGIL_DB' };
    }
  }
  try {
    const db = openStore(file);
    db.prepare('BEGIN IMMEDIATE').run();
    db.prepare('ROLLBACK').run();
    db.close();
    return { aspect: 'store', state: 'ok', message: `${file} opens and is writable` };
  } catch (err) {
    return { aspect: 'store', state: 'fail', message: (err as Error).message };
  }
}

async function checkListen(config: Config): Promise<CheckResult> {
  const { host, port } = config.listen;
  const address = `${host}:${port}`;
  const bindError = await new Promise<Error | null>((done) => {
    const server = createServer();
    server.once('error', done);
    server.listen(port, host, () => server.close(() => done(null)));
  });
  if (bindError) {
    return { aspect: 'listen', state: 'fail', message: `cannot listen on ${address}: ${bindError.message}`, hint: 'is another pgvigil running? choose another address with --listen' };
  }
  if (!isLoopback(host) && !config.httpToken && config.httpAllowUnauthenticated) {
    return { aspect: 'listen', state: 'warn', message: `${address} is reachable from other hosts and the API has no token (http.allow_unauthenticated)`, hint: 'set http_token_file unless everyone who can reach this address may read what pgvigil stores' };
  }
  if (!isLoopback(host) && !config.httpToken) {
    return { aspect: 'listen', state: 'ok', message: `${address} is free; /metrics and /healthz for every host, the API and the page for this host only (no http_token_file)` };
  }
  return { aspect: 'listen', state: 'ok', message: `${address} is free` };
}

async function checkTarget(target: Target): Promise<CheckResult[]> {
  const clientConfig = clientConfigFor(target);
  const where = describeConnection(clientConfig);
  const client = new pg.Client(clientConfig);
  try {
    await client.connect();
  } catch (err) {
    return [{ aspect: `${target.name}: connection`, state: 'fail', message: `cannot connect to ${where}: ${(err as Error).message}`, hint: connectionHint(err) }];
  }
  try {
    const { rows: [info] } = await client.query<{ version: string; version_num: string; recovery: boolean; monitor: boolean; superuser: boolean }>(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS version_num,
              pg_is_in_recovery() AS recovery,
              pg_has_role(current_user, 'pg_monitor', 'USAGE') AS monitor,
              (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser`);
    const versionNum = Number(info!.version_num);
    const results: CheckResult[] = [
      { aspect: `${target.name}: connection`, state: 'ok', message: `${where}: PostgreSQL ${info!.version}, ${info!.recovery ? 'standby' : 'primary'}` },
      checkPrivileges(target.name, info!),
    ];
    if (versionNum < 130000) {
      results.push({ aspect: `${target.name}: version`, state: 'fail', message: `PostgreSQL ${info!.version} is older than 13, which pgvigil supports`, hint: 'upgrade the server' });
    }
    const { rows } = await client.query<{ name: string; setting: string }>(SETTINGS_SQL);
    const settings: Record<string, string> = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
    results.push(...judgeLogSettings(target.name, versionNum, settings));
    const localeDir = await readLocaleDir(client);
    results.push(checkLanguage(target.name, { ...settings, server_version_num: String(versionNum), ...(localeDir !== null ? { [LOCALE_DIR_SETTING]: localeDir } : {}) }));
    return results;
  } catch (err) {
    return [{ aspect: `${target.name}: connection`, state: 'fail', message: `connected to ${where} but a query failed: ${(err as Error).message}`, hint: connectionHint(err) }];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * pg_monitor, and no more: a superuser may take the slots superuser_reserved_connections keeps for
 * the DBA on a full server, the last ones pgvigil must never take (docs/reliability.md).
 */
function checkPrivileges(target: string, role: { monitor: boolean; superuser: boolean }): CheckResult {
  const aspect = `${target}: privileges`;
  if (role.superuser) {
    return {
      aspect, state: 'warn', message: 'the role is a superuser: on a full server it may take the connection slots reserved for superusers (superuser_reserved_connections), and it has rights pgvigil never needs',
      hint: 'connect as a role that is only a member of pg_monitor (docs/monitoring-role.md)',
    };
  }
  if (role.monitor) return { aspect, state: 'ok', message: 'member of pg_monitor' };
  return { aspect, state: 'fail', message: 'the role is not a member of pg_monitor: statistics of other sessions are hidden', hint: 'GRANT pg_monitor TO <pgvigil role> (docs/monitoring-role.md)' };
}

/** Whether pgvigil can read the language the server logs in (its lc_messages). */
function checkLanguage(target: string, server: Readonly<Record<string, string>>): CheckResult {
  const aspect = `${target}: log language`;
  const found = languageOfServer(server);
  if (found === null) return { aspect, state: 'warn', message: 'the server did not say its lc_messages: the log language is detected from the log' };
  if (found.problem === null) return { aspect, state: 'ok', message: describeServerLanguage(found) };
  return {
    aspect, state: 'warn', message: found.problem,
    hint: `install the server's message catalogs on this host (postgres-${found.major}.mo under LOCALEDIR), or set lc_messages = 'C' on the server for logs any tool reads`,
  };
}
