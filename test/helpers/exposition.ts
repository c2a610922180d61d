/** Reading a Prometheus text exposition back in tests and benchmarks. */

/** `name{a="1",b="2"}` -> value, for the sample lines of an exposition. */
export function parseExposition(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return series;
}

/** Two scrapes of one Metrics differ in the values read live (CPU, memory, event loop), nothing else. */
export function withoutLiveValues(text: string): string {
  return text.replace(/^((?:process|nodejs)_\S+) \S+$/gm, '$1 <live>');
}
