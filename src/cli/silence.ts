/**
 * `pgvigil silence add|list|expire`: maintenance windows kept in the store (src/store/silences.ts),
 * so they work whether or not the daemon runs, and the daemon honours them at its next alert.
 */
import { userInfo } from 'node:os';
import type { Config } from '../config/load-config.js';
import { RULES } from '../rules/catalog.js';
import { openStore } from '../store/open-store.js';
import { Silences, type Silence } from '../store/silences.js';
import { EXIT } from './exit-codes.js';

export interface SilenceAddOptions {
  target: string;
  rule?: string;
  for: number;
  comment: string;
}

export function formatSilence(s: Silence, nowMs: number): string {
  const state = s.startsMs > nowMs ? 'from ' + new Date(s.startsMs).toISOString() : s.endsMs > nowMs ? 'active' : 'ended';
  return `#${s.id}  ${s.target}  ${s.ruleId ?? 'every rule'}  ${state} until ${new Date(s.endsMs).toISOString()}  by ${s.createdBy}: ${s.comment}`;
}

type Out = { stdout: (text: string) => void; stderr: (text: string) => void };

export function silenceAdd(config: Config, options: SilenceAddOptions, nowMs: number, out: Out): number {
  const targets = config.targets.map((t) => t.name);
  if (!targets.includes(options.target)) {
    out.stderr(`pgvigil silence: no target ${JSON.stringify(options.target)} in the config (targets: ${targets.join(', ')})\n`);
    return EXIT.USAGE;
  }
  if (options.rule !== undefined && !Object.hasOwn(RULES, options.rule)) {
    out.stderr(`pgvigil silence: no rule ${JSON.stringify(options.rule)} (pgvigil rules lists them)\n`);
    return EXIT.USAGE;
  }
  const db = openStore(config.dbPath);
  try {
    const silence = new Silences(db).add({
      target: options.target, ruleId: options.rule ?? null, startsMs: nowMs, endsMs: nowMs + options.for, comment: options.comment, createdBy: userInfo().username,
    });
    out.stdout(`${formatSilence(silence, nowMs)}\n`);
    return EXIT.OK;
  } finally {
    db.close();
  }
}

/** In force, still to come, and ended in the last day. */
export function silenceList(config: Config, nowMs: number, out: Out): number {
  const db = openStore(config.dbPath);
  try {
    const silences = new Silences(db).list(nowMs - 86_400_000);
    out.stdout(silences.length === 0 ? 'no silence in force or ended in the last day\n' : silences.map((s) => `${formatSilence(s, nowMs)}\n`).join(''));
    return EXIT.OK;
  } finally {
    db.close();
  }
}

export function silenceExpire(config: Config, id: number, nowMs: number, out: Out): number {
  const db = openStore(config.dbPath);
  try {
    if (new Silences(db).expire(id, nowMs)) {
      out.stdout(`silence #${id} ended\n`);
      return EXIT.OK;
    }
    out.stderr(`pgvigil silence: no silence #${id} in force\n`);
    return EXIT.FAILURE;
  } finally {
    db.close();
  }
}
