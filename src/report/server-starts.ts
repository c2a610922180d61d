/**
 * Server starts told apart, from the server_restart events (one per line of the server's stop,
 * crash-reset, recovery and start sequence; server-restart.ts). Each `ready to accept connections`
 * is one start; it is a restart worth counting only when a crash or an immediate shutdown came
 * before it (the server reset its processes, or found itself `interrupted` or `not properly shut
 * down` and recovered): a start after a clean shutdown is a normal start, and the start a standby
 * promotion ends with is a promotion.
 *
 * Sequential (log order); a start whose earlier lines are not in the log counts as normal.
 */
import type { ServerRestartDetails, ServerRestartPhase } from '../domain/index.js';

/** Lines that say the server did not stop cleanly before the next `ready`. */
const UNCLEAN: ReadonlySet<ServerRestartPhase> = new Set(['terminating_others', 'reinitializing', 'interrupted', 'automatic_recovery']);

export interface ServerStartCounts {
  /** Ready again after a crash or an immediate shutdown (recovery ran). */
  after_crash: number;
  /** Ready after a clean shutdown (or with no earlier line in the log). */
  normal: number;
  /** A standby promoted to primary, ready on its new timeline. */
  promotions: number;
  /** `database system is shut down` after a smart or fast shutdown request (or none logged). */
  clean_shutdowns: number;
  /** `received immediate shutdown request`: the next start recovers, as after a crash. */
  immediate_shutdowns: number;
}

export class ServerStarts {
  private readonly tally: ServerStartCounts = { after_crash: 0, normal: 0, promotions: 0, clean_shutdowns: 0, immediate_shutdowns: 0 };
  private unclean = false;
  private promoted = false;
  private immediateRequested = false;

  add(d: ServerRestartDetails): void {
    if (UNCLEAN.has(d.phase)) {
      this.unclean = true;
      return;
    }
    switch (d.phase) {
      case 'promote_requested':
      case 'new_timeline':
        this.promoted = true;
        return;
      case 'shutdown_requested':
        this.immediateRequested = d.shutdown_mode === 'immediate';
        if (this.immediateRequested) this.tally.immediate_shutdowns++;
        return;
      case 'shut_down':
        if (!this.immediateRequested) this.tally.clean_shutdowns++;
        this.immediateRequested = false;
        return;
      case 'ready':
        // A standby promoted after a crash is first of all a promotion.
        if (this.promoted) this.tally.promotions++;
        else if (this.unclean) this.tally.after_crash++;
        else this.tally.normal++;
        this.unclean = false;
        this.promoted = false;
        return;
      default:
        return;
    }
  }

  counts(): ServerStartCounts {
    return { ...this.tally };
  }
}
