import { describe, expect, it } from 'vitest';
import type { LogFile } from './log-file-set.js';
import { decideResume, type ResumeInput, type SavedOffset } from './resume-position.js';

function file(name: string, id: string, sizeBytes: number, mtimeMs: number): LogFile {
  return { path: `/logs/${name}`, name, id, sizeBytes, mtimeMs };
}

const a = file('postgresql-2026-01-01_000000.log', '1:10', 5000, 1000);
const b = file('postgresql-2026-01-02_000000.log', '1:11', 7000, 2000);
const c = file('postgresql-2026-01-03_000000.log', '1:12', 300, 3000);
const savedIn = (f: LogFile, offset: number, updatedMs = 2500): SavedOffset => ({ filePath: f.path, fileId: f.id, offset, updatedMs });

const base: ResumeInput = { files: [a, b, c], saved: null, startAt: 'end', presentAtStart: true, namesSortByTime: true };

type Row = [string, Partial<ResumeInput>, ReturnType<typeof decideResume>];
const rows: Row[] = [
  ['first start, start_at end: the end of the newest file', {},
    { kind: 'open', file: c, offset: 'end', lost: null, truncatedWhileDown: false }],
  ['first start, start_at beginning: the start of the newest file', { startAt: 'beginning' },
    { kind: 'open', file: c, offset: 0, lost: null, truncatedWhileDown: false }],
  ['files that appeared after the start are read from the oldest, from byte 0', { presentAtStart: false },
    { kind: 'open', file: a, offset: 0, lost: null, truncatedWhileDown: false }],
  ['nothing there yet: wait', { files: [] }, { kind: 'wait' }],
  ['saved file still there: resume at the saved offset', { saved: savedIn(b, 4096) },
    { kind: 'open', file: b, offset: 4096, lost: null, truncatedWhileDown: false }],
  ['the saved identity under another name is a reused inode, not the saved file', { saved: { ...savedIn(b, 4096), filePath: '/logs/postgresql-2026-01-01_120000.log' } },
    { kind: 'open', file: b, offset: 0, lost: { filePath: '/logs/postgresql-2026-01-01_120000.log', offset: 4096 }, truncatedWhileDown: false }],
  ['saved file truncated while down: from 0', { saved: savedIn(c, 9000) },
    { kind: 'open', file: c, offset: 0, lost: null, truncatedWhileDown: true }],
  ['saved file gone: the next file by name, from 0, and the loss is reported', { files: [b, c], saved: savedIn(a, 4000) },
    { kind: 'open', file: b, offset: 0, lost: { filePath: a.path, offset: 4000 }, truncatedWhileDown: false }],
  ['saved file gone, names do not sort: files changed since the save', {
    files: [a, b, c], saved: { filePath: '/logs/postgresql-Mon.log', fileId: '9:9', offset: 10, updatedMs: 2500 }, namesSortByTime: false,
  }, { kind: 'open', file: c, offset: 0, lost: { filePath: '/logs/postgresql-Mon.log', offset: 10 }, truncatedWhileDown: false }],
  ['saved file gone and nothing newer: the end of the newest file', { files: [a], saved: savedIn(b, 10) },
    { kind: 'open', file: a, offset: 'end', lost: { filePath: b.path, offset: 10 }, truncatedWhileDown: false }],
  ['file mode, the file was replaced while down: the new file from 0', {
    files: [file('server.log', '2:2', 100, 100)], saved: { filePath: '/logs/server.log', fileId: '2:1', offset: 50, updatedMs: 900 },
    singleFile: true, namesSortByTime: false,
  }, { kind: 'open', file: file('server.log', '2:2', 100, 100), offset: 0, lost: { filePath: '/logs/server.log', offset: 50 }, truncatedWhileDown: false }],
  ['file mode, the saved file was renamed away: finish it first', {
    files: [file('server.log', '2:2', 100, 100)], saved: { filePath: '/logs/server.log', fileId: '2:1', offset: 50, updatedMs: 900 },
    singleFile: true, renamedSaved: file('server.log.1', '2:1', 80, 50),
  }, { kind: 'open', file: file('server.log.1', '2:1', 80, 50), offset: 50, lost: null, truncatedWhileDown: false }],
  ['file mode, saved under a link\'s own path, the link resolved to that same file now: resume in it', {
    files: [file('server-1200.log', '2:1', 100, 100)], saved: { filePath: '/logs/server.log', fileId: '2:1', offset: 50, updatedMs: 900 },
    singleFile: true, namesSortByTime: false,
  }, { kind: 'open', file: file('server-1200.log', '2:1', 100, 100), offset: 50, lost: null, truncatedWhileDown: false }],
  ['file mode, saved offset but no file yet: wait', { files: [], saved: savedIn(a, 1), singleFile: true }, { kind: 'wait' }],
];

describe('decideResume', () => {
  it.each(rows)('%s', (_title, input, expected) => {
    expect(decideResume({ ...base, ...input })).toEqual(expected);
  });
});
