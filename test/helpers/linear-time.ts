/**
 * A complexity check, not a speed target: running `run` on an input 8 times larger must take
 * less than 30 times as long. Linear work gives ~8x, quadratic ~64x, so the bound leaves room for
 * a loaded machine without letting catastrophic backtracking through. Robust to load by design:
 * it counts this process's CPU time, not wall time (time spent waiting for a core does not
 * count), both sizes are timed in alternation (cache pollution hits both), each over enough
 * repetitions to last several milliseconds, and the fastest of several rounds is kept; a
 * ratio over the bound is measured again up to twice, since a load spike cannot fake linear time
 * but can fake a high ratio once.
 */
import { expect } from 'vitest';

export const GROWTH = 8;
export const MAX_RATIO = 30;
const ROUNDS = 4;
const MIN_BATCH_MS = 2;
const WARM_UP_RUNS = 3;
const ATTEMPTS = 3;

/** Asserts that `run` over `build(GROWTH * n)` costs less than MAX_RATIO times `build(n)`. */
export function expectLinear<T>(what: string, build: (n: number) => T, run: (input: T) => unknown, n: number): void {
  const small = build(n);
  const large = build(GROWTH * n);
  // Flattens cons strings and lets the JIT optimise, so neither size pays for it in a round.
  for (let i = 0; i < WARM_UP_RUNS; i++) {
    run(small);
    run(large);
  }
  let reps = 1;
  while (timed(run, small, reps) < MIN_BATCH_MS && reps < 1 << 20) reps *= 2;
  let best = { ratio: Number.POSITIVE_INFINITY, smallMs: 0, largeMs: 0 };
  for (let attempt = 0; attempt < ATTEMPTS && best.ratio >= MAX_RATIO; attempt++) {
    let smallMs = Number.POSITIVE_INFINITY;
    let largeMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) {
      smallMs = Math.min(smallMs, timed(run, small, reps));
      largeMs = Math.min(largeMs, timed(run, large, reps));
    }
    if (largeMs / smallMs < best.ratio) best = { ratio: largeMs / smallMs, smallMs, largeMs };
  }
  const { ratio, smallMs, largeMs } = best;
  expect(ratio, `${what}: ${GROWTH}x the input took ${ratio.toFixed(1)}x the time (${smallMs.toFixed(2)} ms -> ${largeMs.toFixed(2)} ms for ${reps} runs)`)
    .toBeLessThan(MAX_RATIO);
}

function timed<T>(run: (input: T) => unknown, input: T, reps: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < reps; i++) run(input);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
