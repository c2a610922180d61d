/**
 * What the commands that read a sidecar's store (report, serve) take from its config: the store
 * file (`db`, unless --db is given) and the targets' names, so `-c` finds the same store `run`
 * writes and a misspelt --target is a usage error rather than an empty report.
 */
import { loadConfig } from '../config/load-config.js';

export interface StoreOfConfig {
  dbPath: string;
  targets: string[];
}

/** The whole file is checked as `run` would check it: a ConfigError exits 2. */
export function storeOfConfig(file: string, dbFlag: string | undefined): StoreOfConfig {
  const config = loadConfig({ file, flags: { db: dbFlag } });
  return { dbPath: config.dbPath, targets: config.targets.map((t) => t.name) };
}

/** Why `target` cannot be asked for (it is not one of the config's), or null. */
export function unknownTarget(target: string | undefined, targets: readonly string[]): string | null {
  if (target === undefined || targets.includes(target)) return null;
  return `no target ${JSON.stringify(target)} in the config (targets: ${targets.join(', ')})`;
}
