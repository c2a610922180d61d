/**
 * The newest run of samples for which a condition holds: "full in every probe since", "failing in
 * every sample since". The run's first item says since when; an empty run means the newest sample
 * does not hold. A gap in the samples (pgvigil down) does not break a run: nothing says otherwise.
 */
export function trailingRun<T>(items: readonly T[], holds: (item: T) => boolean): T[] {
  let start = items.length;
  while (start > 0 && holds(items[start - 1]!)) start--;
  return items.slice(start);
}
