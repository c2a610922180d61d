/**
 * What pgvigil's own reading costs before any parsing: its line splitter (offsets, slabs) and the
 * compiled log_line_prefix regex with its captures (time, pid, user, database, level), on every
 * line, nothing else. `analyze -j 1` against this shows what framing, classification and the
 * summary add; this against the bare loop, what exact offsets and the captured fields cost.
 * The prefix comes in BENCH_PREFIX. Prints `{"lines": N, "matched": N}`.
 */
import { compilePrefix } from '../../src/parsers/prefix.js';
import { LineSplitter } from '../../src/sources/line-reader.js';
import { readChunks } from '../../src/sources/offline-reader.js';

const regex = compilePrefix(process.env.BENCH_PREFIX!).regex;
const splitter = new LineSplitter();
let matched = 0;
for await (const chunk of readChunks(process.argv[2]!)) {
  splitter.push(chunk, (line) => {
    if (regex.exec(line.text) !== null) matched++;
  });
}
splitter.end(() => undefined);
process.stdout.write(`${JSON.stringify({ lines: splitter.stats.lines, matched })}\n`);
