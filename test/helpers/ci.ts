/**
 * Whether this run is CI's: `.ci/run` exports CI=true, and runners set CI=1, CI=yes or CI=true.
 * Any value but empty, 0, false, no or off counts, so a runner's own spelling cannot turn every
 * gated test (tools.ts, a missing golden, a locale) into a quiet skip.
 */
const FALSE_VALUES = new Set(['', '0', 'false', 'no', 'off']);

export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI;
  return value !== undefined && !FALSE_VALUES.has(value.trim().toLowerCase());
}
