/**
 * Pairs an event that opens something (a checkpoint's `starting` line, a process's lock wait)
 * with the event that ends it (the checkpoint's `complete`, the process's lock timeout), by key,
 * when the two may fall in different ranges or minutes folded apart (section.ts).
 *
 * A range keeps, per key, what the range before it can still change: the end that came before any
 * start (`leading`, waiting for an earlier open start) and the start still open when the range
 * ended (`open`). Merging two ranges pairs the later's leading ends with the earlier's open
 * starts, so that any split of the events pairs them as one pass over them all would.
 *
 * Owns: the pairing. Never: what a pair means (the sections' `onPaired` and `onAbandoned` say).
 */

export interface PairingState<Start, End> {
  /** Per key, the last start with no end after it yet. */
  open: Record<string, Start>;
  /** Per key whose first event in the range was an end: that end, unpaired until merged after an earlier range. */
  leading: Record<string, End>;
  /** Keys with any start or end in the range: a later end of one of them with nothing open pairs with nothing. */
  known: Record<string, true>;
  /** Entries in `known` (bounded by `forgetSettled`). */
  known_count: number;
}

export interface PairingCallbacks<Start, End> {
  /** An end and the start it closes, or null when no start was open for its key. */
  onPaired(start: Start | null, end: End): void;
  /** A start that no end followed before the next start of its key. */
  onAbandoned(start: Start): void;
}

export function emptyPairing<Start, End>(): PairingState<Start, End> {
  return { open: {}, leading: {}, known: {}, known_count: 0 };
}

export function openPair<Start, End>(state: PairingState<Start, End>, key: string, start: Start, on: PairingCallbacks<Start, End>): void {
  const abandoned = state.open[key];
  if (abandoned !== undefined) on.onAbandoned(abandoned);
  state.open[key] = start;
  know(state, key);
}

export function closePair<Start, End>(state: PairingState<Start, End>, key: string, end: End, on: PairingCallbacks<Start, End>): void {
  const start = state.open[key];
  if (start !== undefined) {
    delete state.open[key];
    on.onPaired(start, end);
  } else if (state.known[key]) {
    on.onPaired(null, end);
  } else {
    // The range before this one may hold its start: decided when merged, or by `settleLeading`.
    state.leading[key] = end;
  }
  know(state, key);
}

function know(state: PairingState<unknown, unknown>, key: string): void {
  if (state.known[key]) return;
  state.known[key] = true;
  state.known_count++;
}

/** `earlier` followed by `later`: pairs what spans the boundary; returns `earlier`, updated. */
export function mergePairing<Start, End>(
  earlier: PairingState<Start, End>, later: PairingState<Start, End>, on: PairingCallbacks<Start, End>,
): PairingState<Start, End> {
  for (const key of Object.keys(later.known)) {
    const end = later.leading[key];
    const start = earlier.open[key];
    if (end !== undefined) {
      // The later range begins with this end, as if it were added right after the earlier range.
      closePair(earlier, key, end, on);
    } else if (start !== undefined) {
      // The later range's first event of this key was a start: the earlier one never ended.
      delete earlier.open[key];
      on.onAbandoned(start);
    }
    const laterOpen = later.open[key];
    if (laterOpen !== undefined) earlier.open[key] = laterOpen;
    know(earlier, key);
  }
  return earlier;
}

/** The leading ends as unpaired (nothing came before the state): what a result reports. */
export function settleLeading<Start, End>(state: PairingState<Start, End>, onUnpaired: (end: End) => void): void {
  for (const end of Object.values(state.leading)) onUnpaired(end);
}

/**
 * Keeps `known` under about 2 x maxKeys when keys are many (one per process that waited for a
 * lock): forgets the keys with nothing open or leading. The cost: a later end of a forgotten key
 * waits as leading, as if its range had no event of that key before it, and pairs on merge with
 * an earlier start of the same key that this range had already closed; with keys that are PIDs
 * this needs the PID's reuse within the window that the section accepts a pairing in.
 */
export function forgetSettled(state: PairingState<unknown, unknown>, maxKeys: number): void {
  if (state.known_count <= 2 * maxKeys) return;
  for (const key of Object.keys(state.known)) {
    if (state.open[key] === undefined && state.leading[key] === undefined) delete state.known[key];
  }
  state.known_count = Object.keys(state.known).length;
}
