/**
 * Whether a client takes a gzip response body, from its Accept-Encoding header (RFC 9110
 * 12.5.3): `gzip` (or the old `x-gzip`) with a weight above 0, or `*` above 0 when gzip is not
 * named. Prometheus sends `Accept-Encoding: gzip`; no header means identity only.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let named: number | null = null;
  let any: number | null = null;
  for (const entry of header.split(',')) {
    const [coding = '', ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    const weight = weightOf(params);
    if (coding === 'gzip' || coding === 'x-gzip') named = Math.max(named ?? 0, weight);
    else if (coding === '*') any = weight;
  }
  return (named ?? any ?? 0) > 0;
}

/** `q=0.5` -> 0.5; no q -> 1; a malformed q -> 0 (not acceptable rather than guessed). */
function weightOf(params: readonly string[]): number {
  const q = params.find((p) => p.startsWith('q='));
  if (q === undefined) return 1;
  const value = q.slice(2);
  return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
}
