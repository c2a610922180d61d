/**
 * Where a tailer starts reading: a pure decision over what the source holds now and the offset
 * saved by the last run. Separate from the tailer's I/O so every case is a row in a table test.
 *
 * The invariant it keeps: everything written after the saved offset is read (resume in the saved
 * file when it still exists, else from the start of every file written after it), and nothing
 * before it is read again.
 */
import path from 'node:path';
import type { LogFile } from './log-file-set.js';
import { compareWriteOrder } from './log-file-set.js';

export type StartAt = 'end' | 'beginning';

export interface SavedOffset {
  filePath: string;
  fileId: string;
  offset: number;
  updatedMs: number;
}

export interface ResumeInput {
  /** The source's files in write order (file mode: the one configured file, when it exists). */
  files: LogFile[];
  saved: SavedOffset | null;
  startAt: StartAt;
  /**
   * True when these files were there when the tailer started. Files that appear later were
   * written after the start, so they are read from their first byte whatever `startAt` says.
   */
  presentAtStart: boolean;
  /** Whether file names sort in time order (namesSortByTime of log_filename). */
  namesSortByTime: boolean;
  /** File mode (one configured file rather than a directory of log_filename files). */
  singleFile?: boolean;
  /** File mode: a file elsewhere in the directory carrying the saved identity (renamed away). */
  renamedSaved?: LogFile | null;
}

export type ResumeDecision =
  | { kind: 'wait' }
  | {
      kind: 'open';
      file: LogFile;
      /** 'end': the end of the file, backed up to the start of an unfinished last line. */
      offset: number | 'end';
      /** The saved file is gone: bytes after `offset` in it could not be read. */
      lost: { filePath: string; offset: number } | null;
      /** The saved file is there but shorter than the saved offset: truncated while we were down. */
      truncatedWhileDown: boolean;
    };

export function decideResume(input: ResumeInput): ResumeDecision {
  const { files, saved } = input;
  if (saved) {
    // Same identity under another name is a reused inode (the server never renames its files;
    // a logrotate rename comes in as renamedSaved), not the saved file. File mode has one file,
    // whatever its path: a position saved under a link's own path names the link's target.
    const same = input.renamedSaved ?? files.find((f) => f.id === saved.fileId && (input.singleFile || f.path === saved.filePath));
    if (same) {
      const truncated = same.sizeBytes < saved.offset;
      return { kind: 'open', file: same, offset: truncated ? 0 : saved.offset, lost: null, truncatedWhileDown: truncated };
    }
    const next = filesAfterSaved(input, saved)[0];
    if (!next) return files.length === 0 ? { kind: 'wait' } : open(files.at(-1)!, 'end', saved);
    return open(next, 0, saved);
  }
  const newest = files.at(-1);
  if (!newest) return { kind: 'wait' };
  if (!input.presentAtStart) return open(files[0]!, 0, null);
  return open(newest, input.startAt === 'end' ? 'end' : 0, null);
}

/** Files written after the saved one, oldest first, when the saved file itself is gone. */
function filesAfterSaved(input: ResumeInput, saved: SavedOffset): LogFile[] {
  // File mode: the file now at the configured path replaced the saved one, so it is all new.
  if (input.singleFile) return input.files;
  const savedName = path.basename(saved.filePath);
  if (input.namesSortByTime) {
    // A file under the saved name but with another identity was created anew: it is newer.
    return input.files.filter((f) => f.name > savedName || (f.name === savedName && f.id !== saved.fileId));
  }
  // Names repeat (postgresql-%a.log): a file changed since the last save holds unread data.
  const changed = input.files.filter((f) => f.mtimeMs >= saved.updatedMs);
  return changed.sort(compareWriteOrder);
}

function open(file: LogFile, offset: number | 'end', saved: SavedOffset | null): ResumeDecision {
  return {
    kind: 'open', file, offset,
    lost: saved ? { filePath: saved.filePath, offset: saved.offset } : null,
    truncatedWhileDown: false,
  };
}
