/**
 * The most two threads can give on this machine, whatever pgvigil does with them: two
 * `pgvigil analyze -j 1` processes, one per half of the log (cut at a line), at the same time,
 * sharing nothing. `analyze -j 2` against this shows what its workers and merge cost; this
 * against `-j 1`, what the machine gives a second thread of this work (GC helper threads, reads
 * and the kernel already keep part of a second core busy beside one -j 1).
 * Arguments: the pgvigil launcher, then the two halves. Prints the line count of both.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const [launcher, ...halves] = process.argv.slice(2) as [string, string, string];
const outputs = await Promise.all(halves.map((half) => promisify(execFile)(process.execPath, [launcher, 'analyze', '--json', '-j', '1', half], { maxBuffer: 64 * 1024 * 1024 })));
const lines = outputs.reduce((sum, { stdout }) => sum + (JSON.parse(stdout) as { lines: number }).lines, 0);
process.stdout.write(`${JSON.stringify({ lines })}\n`);
