/**
 * `pgvigil rules`: every rule pgvigil has, what it detects, what it needs from PostgreSQL (log
 * settings, collectors, the log events it reads) and its thresholds with their defaults; with
 * `--config`, the thresholds in force and which rules are disabled. The list comes from the rule
 * catalog itself (src/rules/catalog.ts), so it cannot drift from what runs.
 */
import { Command } from 'commander';
import type { RuleDescription } from '../rules/catalog.js';
import { EXIT } from './exit-codes.js';

interface RulesFlags {
  config?: string;
  json?: boolean;
}

export function rulesCommand(setExitCode: (code: number) => void): Command {
  return new Command('rules')
    .description('list every rule: what it detects, what it needs (log settings, collectors), its thresholds and defaults')
    .option('-c, --config <file>', 'show the thresholds and disabled rules of this config file (env PGVIGIL_CONFIG)')
    .option('--json', 'print the list as one JSON document')
    .action(async (flags: RulesFlags) => {
      const file = flags.config ?? process.env.PGVIGIL_CONFIG;
      // Loaded when the command runs, as main.ts does for the others: every rule, the config schema.
      const { describeRules } = await import('../rules/catalog.js');
      const options = file ? (await import('../config/load-config.js')).loadConfig({ file }).rules : undefined;
      const rules = describeRules(options);
      process.stdout.write(flags.json ? `${JSON.stringify(rules.map(toJson), null, 2)}\n` : formatRules(rules));
      setExitCode(EXIT.OK);
    });
}

/** snake_case, as everything an operator reads. */
function toJson(r: RuleDescription) {
  return {
    id: r.id, severity: r.severity, enabled: r.enabled, description: r.description,
    needs: { settings: r.needs.settings, collectors: r.needs.collectors, log_events: r.needs.events },
    thresholds: r.thresholds,
  };
}

export function formatRules(rules: readonly RuleDescription[]): string {
  return rules.map((r) => {
    const lines = [`${r.id} (${r.severity}${r.enabled ? '' : ', disabled'})`, `  ${r.description}`];
    const n = r.needs;
    if (n.settings.length > 0) lines.push(`  log settings: ${n.settings.map((s) => `${s.name} ${s.value}`).join('; ')}`);
    if (n.collectors.length > 0) lines.push(`  collectors:   ${n.collectors.join(', ')}`);
    lines.push(`  log events:   ${n.events.length > 0 ? n.events.join(', ') : '(none: sampled series only, so not from a log alone)'}`);
    const thresholds = r.thresholds.map((t) => `${t.name}: ${t.value}${t.value === t.default ? '' : ` (default ${t.default})`}`);
    lines.push(`  thresholds:   ${thresholds.join(', ')}`);
    return `${lines.join('\n')}\n`;
  }).join('\n');
}
