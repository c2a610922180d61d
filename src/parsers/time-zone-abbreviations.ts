/**
 * Time zone abbreviations as PostgreSQL prints them with %Z (log_line_prefix %m/%t, csvlog,
 * jsonlog), mapped to UTC offsets in minutes.
 *
 * Provenance: generated from tzdata 2025b (Debian 12) by printing `date +'%Z %z'` for every zone
 * of zone.tab and zone1970.tab (plus UTC, CET, EET, WET, MET and the POSIX US zones) in January
 * and July of 2020, 2026 and 2030. PostgreSQL prints the same abbreviations: it uses the same
 * tzdata (its own copy or the system's). Zones without an abbreviation print a numeric offset
 * ("+01", "-03", "+0545"), which parseNumericZone handles; those are never in this table.
 *
 * An abbreviation with several offsets is ambiguous (CST is US Central, Cuba and China) and
 * needs the server's log_timezone to resolve.
 */
export const ZONE_ABBREVIATION_OFFSETS_MIN: Readonly<Record<string, readonly number[]>> = {
  ACDT: [630],
  ACST: [570],
  ADT: [-180],
  AEDT: [660],
  AEST: [600],
  AKDT: [-480],
  AKST: [-540],
  AST: [-240],
  AWST: [480],
  BST: [60],
  CAT: [120],
  CDT: [-240, -300],
  CEST: [120],
  CET: [60],
  CST: [480, -300, -360],
  ChST: [600],
  EAT: [180],
  EDT: [-240],
  EEST: [180],
  EET: [120],
  EST: [-300],
  GMT: [0],
  HDT: [-540],
  HKT: [480],
  HST: [-600],
  IDT: [180],
  IST: [60, 120, 330],
  JST: [540],
  KST: [540],
  MDT: [-360],
  MEST: [120],
  MET: [60],
  MSK: [180],
  MST: [-420],
  NDT: [-150],
  NST: [-210],
  NZDT: [780],
  NZST: [720],
  PDT: [-420],
  PKT: [300],
  PST: [480, -480],
  SAST: [120],
  SST: [-660],
  UCT: [0],
  UTC: [0],
  WAT: [60],
  WEST: [60],
  WET: [0],
  WIB: [420],
  WIT: [540],
  WITA: [480],
  Z: [0],
};

/**
 * Offset in minutes of a numeric zone as tzdata prints it for zones without an abbreviation:
 * "+01", "-03", "+0545", "-0930"; also "+05:30" as some tools write it. null when not numeric.
 */
export function parseNumericZone(text: string): number | null {
  const sign = text.charCodeAt(0) === 43 ? 1 : text.charCodeAt(0) === 45 ? -1 : 0;
  if (sign === 0) return null;
  const digits = text.length === 6 && text.charCodeAt(3) === 58 ? text.slice(1, 3) + text.slice(4) : text.slice(1);
  if (digits.length !== 2 && digits.length !== 4) return null;
  let hours = 0;
  let minutes = 0;
  for (let i = 0; i < digits.length; i++) {
    const d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    if (i < 2) hours = hours * 10 + d;
    else minutes = minutes * 10 + d;
  }
  if (hours > 15 || minutes > 59) return null;
  return sign * (hours * 60 + minutes);
}
