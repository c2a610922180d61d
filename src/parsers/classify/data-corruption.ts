/**
 * Data pages that failed verification when read (bufmgr.c, bufpage.c; SQLSTATE XX001, the same
 * words in 13-19):
 * - `invalid page in block N of relation base/5/16384`: ERROR in the backend that read it;
 *   PG 18+ quotes the path (`"base/5/16384"`) and, when an I/O worker did the read, logs it at LOG
 *   there too. With zero_damaged_pages: `...; zeroing out page` at WARNING.
 * - `page verification failed, calculated checksum X but expected Y`: the line before, from the
 *   same process, on a cluster with data checksums (WARNING; LOG from 18's I/O workers). It names
 *   no relation.
 */
import type { DataCorruptionDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { toInt } from './fields.js';

export const INVALID_PAGE = 'invalid page in block ';
export const CHECKSUM_FAILED = 'page verification failed, ';

// Greedy over what a path never holds (a quote, a semicolon): linear on any line.
const INVALID_PAGE_LINE = /^invalid page in block (\d+) of relation "?([^";]+)"?(; zeroing out page)?$/;
const CHECKSUM_LINE = /^page verification failed, calculated checksum (\d+) but expected (\d+)$/;
/** `base/<database oid>/<filenode>`, with a `_fsm`/`_vm` fork or a `.N` segment after it. */
const IN_DATABASE = /^base\/(\d+)\/(\d+)/;
const FILENODE = /(\d+)(?:_[a-z]+)?(?:\.\d+)?$/;

export function classifyDataCorruption(message: string): Classification | null {
  const invalid = INVALID_PAGE_LINE.exec(message);
  if (invalid) {
    const path = invalid[2]!;
    const inDatabase = IN_DATABASE.exec(path);
    return corruption({
      problem: 'invalid_page', relation_path: path, block: toInt(invalid[1]), zeroed: invalid[3] !== undefined,
      database_oid: inDatabase ? toInt(inDatabase[1]) : null, relfilenode: toInt((inDatabase?.[2] ?? FILENODE.exec(path)?.[1]) ?? undefined),
    });
  }
  const checksum = CHECKSUM_LINE.exec(message);
  if (checksum) return corruption({ problem: 'checksum_mismatch', calculated_checksum: toInt(checksum[1]), expected_checksum: toInt(checksum[2]) });
  return null;
}

function corruption(d: Partial<DataCorruptionDetails> & Pick<DataCorruptionDetails, 'problem'>): Classification {
  return {
    kind: 'data_corruption',
    details: {
      relation_path: null, database_oid: null, relfilenode: null, block: null, zeroed: false, calculated_checksum: null, expected_checksum: null, ...d,
    },
  };
}
