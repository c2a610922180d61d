/**
 * pgvigil's exit codes (documented in README.md; a test keeps the two in sync).
 */
export const EXIT = {
  /** Success; `check`: every check passed (warnings allowed). */
  OK: 0,
  /** `check`: a check failed. `run`: could not start (store, listen address) or stopped on an error. `analyze`: unreadable, nothing understood, or most lines of a file not matching its prefix. `report`: no store. Any command: writing stdout failed (not by its reader going away). */
  FAILURE: 1,
  /** Bad usage or an invalid configuration: nothing was started. */
  USAGE: 2,
  /** A bug: an unexpected internal error (please report it with the log). */
  INTERNAL: 70,
} as const;
