/**
 * `pgvigil report --store postgres://...`: the fleet report from the central store: the
 * per-target summary, then the incident report over the selected targets. Connects in a
 * read-only session, so even a role that could write changes nothing.
 */
import type { CentralWindow } from '../central/central-report.js';
import { EXIT } from './exit-codes.js';
import { writeReport, type ReportFormat } from './report.js';

export async function runCentralReport(dsn: string, window: CentralWindow, format: ReportFormat, output: string | undefined): Promise<number> {
  const [{ default: pg }, { conninfoToUrl }, { connectionHint, describeConnection, pgClientConfig }, central, { requireCentralSchema }, { renderIncidentReport }, { readIncidentReport }, { renderFleetSummaryText }] = await Promise.all([
    import('pg'), import('../lib/conninfo.js'), import('../lib/pg-connection.js'), import('../central/central-report.js'),
    import('../central/migrate-central.js'), import('../report/render-incident-report.js'), import('../report/stored-incident-report.js'),
    import('../report/fleet-summary-text.js'),
  ]);
  const url = conninfoToUrl(dsn);
  if (!url.ok) {
    process.stderr.write(`pgvigil report: --store ${url.problem}\n`);
    return EXIT.USAGE;
  }
  const config = pgClientConfig(url.url, { application_name: 'pgvigil report', connectionTimeoutMillis: 10_000, statement_timeout: 120_000 });
  const client = new pg.Client(config);
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
    await requireCentralSchema(client);
    const summary = await central.fleetSummary(client, window);
    const { report, eventsLeftOut } = await readIncidentReport((query) => central.centralReportWindow(client, { ...query, cluster: window.cluster }), window);
    if (eventsLeftOut > 0) {
      process.stderr.write(`pgvigil report: the window holds ${eventsLeftOut} more events than a report reads (${central.MAX_REPORT_EVENTS}); its oldest ones are left out: narrow it with --from/--to, --target or --cluster\n`);
    }
    const rendered = format === 'json' ? `${JSON.stringify({ fleet_summary: summary, ...report })}\n`
      : format === 'text' ? `${renderFleetSummaryText(summary, window)}\n${renderIncidentReport(report, 'text')}`
      : renderIncidentReport(report, format);
    return writeReport(rendered, output);
  } catch (err) {
    process.stderr.write(`pgvigil report: ${describeConnection(config)}: ${(err as Error).message}\n  hint: ${connectionHint(err)}\n`);
    return EXIT.FAILURE;
  } finally {
    await client.end().catch(() => undefined);
  }
}
