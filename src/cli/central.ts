/**
 * `pgvigil central`: administers the central PostgreSQL store that sidecars forward to (issue
 * #13, docs/fleet.md). `migrate` creates or upgrades the schema and the partitions ahead;
 * `prune` drops whole daily partitions past a retention age (both as the schema's owner);
 * `forward` drains one store (say, of `pgvigil analyze --db`) into it and exits.
 */
import { Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { parseReportTime } from './report.js';

interface CentralFlags {
  dsn?: string;
}

const DSN_HELP = 'the central database: a libpq URL or keyword=value pairs (env PGVIGIL_FORWARD_POSTGRES_DSN; password from PGPASSWORD or PGPASSFILE)';

export function centralCommand(setExitCode: (code: number) => void): Command {
  const central = new Command('central').description('create, upgrade and prune the central PostgreSQL store that sidecars forward to');
  central.command('migrate')
    .description('create or upgrade the pgvigil schema in the central database and its partitions ahead')
    .option('--dsn <conninfo>', DSN_HELP)
    .action(async (flags: CentralFlags) => {
      setExitCode(await withCentral(flags, 'migrate', async (client) => {
        const { migrateCentral } = await import('../central/migrate-central.js');
        const result = await migrateCentral(client, Date.now());
        const what = result.applied.length > 0 ? `applied migration${result.applied.length > 1 ? 's' : ''} ${result.applied.join(', ')}` : 'already up to date';
        process.stdout.write(`pgvigil central migrate: ${what}; schema version ${result.version}; ${result.partitionsCreated} partitions created\n`);
      }));
    });
  central.command('prune')
    .description('drop the daily partitions (events, alerts, transitions, samples) older than a retention age')
    .option('--dsn <conninfo>', DSN_HELP)
    .requiredOption('--older-than <age>', 'drop whole days older than this, such as 30d')
    .action(async (flags: CentralFlags & { olderThan: string }) => {
      const cutoffMs = parseReportTime(flags.olderThan, Date.now());
      if (cutoffMs === null || !/^\d/.test(flags.olderThan)) {
        process.stderr.write(`pgvigil central prune: --older-than ${JSON.stringify(flags.olderThan)}: give an age such as 30d or 720h\n`);
        setExitCode(EXIT.USAGE);
        return;
      }
      setExitCode(await withCentral(flags, 'prune', async (client) => {
        const { dropPartitionsBefore, requireCentralSchema } = await import('../central/migrate-central.js');
        await requireCentralSchema(client);
        const dropped = await dropPartitionsBefore(client, cutoffMs);
        process.stdout.write(`pgvigil central prune: dropped ${dropped.length} partitions${dropped.length > 0 ? `: ${dropped.join(', ')}` : ''}\n`);
      }));
    });
  central.command('forward')
    .description('forward everything one store holds that was not forwarded yet (e.g. of `pgvigil analyze --db`), then exit')
    .option('--dsn <conninfo>', DSN_HELP)
    .option('--db <file>', 'SQLite store (env PGVIGIL_DB)', process.env.PGVIGIL_DB ?? './pgvigil.db')
    .option('--batch-rows <n>', 'rows per stream per batch', '5000')
    .action(async (flags: CentralFlags & { db: string; batchRows: string }) => {
      const batchRows = Number(flags.batchRows);
      if (!Number.isInteger(batchRows) || batchRows < 1) {
        process.stderr.write(`pgvigil central forward: --batch-rows ${JSON.stringify(flags.batchRows)}: give a whole number of rows\n`);
        setExitCode(EXIT.USAGE);
        return;
      }
      setExitCode(await withCentral(flags, 'forward', async (_client, clientConfig) => {
        const [{ drainStore }, { systemClock }] = await Promise.all([import('../forward/drain-store.js'), import('../domain/clock.js')]);
        const sent = await drainStore(flags.db, clientConfig, {
          batchRows, clock: systemClock, maxFailures: 20,
          onRetry: (err, failures) => process.stderr.write(`pgvigil central forward: batch failed (${(err as Error).message}); retry ${failures} of 19\n`),
        });
        process.stdout.write(`pgvigil central forward: ${sent} rows forwarded from ${flags.db}; nothing left\n`);
      }));
    });
  return central;
}

async function withCentral(flags: CentralFlags, verb: string, work: (client: import('pg').Client, config: import('pg').ClientConfig) => Promise<void>): Promise<number> {
  const [{ default: pg }, { conninfoToUrl }, { connectionHint, describeConnection, pgClientConfig }] = await Promise.all([
    import('pg'), import('../lib/conninfo.js'), import('../lib/pg-connection.js'),
  ]);
  const dsn = flags.dsn ?? process.env.PGVIGIL_FORWARD_POSTGRES_DSN;
  if (dsn === undefined || dsn === '') {
    process.stderr.write(`pgvigil central ${verb}: give the central database with --dsn or PGVIGIL_FORWARD_POSTGRES_DSN\n`);
    return EXIT.USAGE;
  }
  const url = conninfoToUrl(dsn);
  if (!url.ok) {
    process.stderr.write(`pgvigil central ${verb}: --dsn ${url.problem}\n`);
    return EXIT.USAGE;
  }
  const config = pgClientConfig(url.url, { application_name: 'pgvigil central', connectionTimeoutMillis: 10_000 });
  const client = new pg.Client(config);
  // A server restarting under this connection must not end the process: the work reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await work(client, config);
    return EXIT.OK;
  } catch (err) {
    process.stderr.write(`pgvigil central ${verb}: ${describeConnection(config)}: ${(err as Error).message}\n  hint: ${connectionHint(err)}\n`);
    return EXIT.FAILURE;
  } finally {
    await client.end().catch(() => undefined);
  }
}
