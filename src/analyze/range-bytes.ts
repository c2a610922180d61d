/**
 * Size of the ranges a plain file is cut into for `analyze -j N`: large enough that the work per
 * range (a task message, a boundary check) is noise, small enough that a range's events waiting
 * for the in-order merge stay a few MB.
 */
export const DEFAULT_RANGE_BYTES = 4 * 1024 * 1024;
