/**
 * The language detector's index shipped beside the catalogs (`catalogs/detector-index.json`):
 * reading every catalog and building the detector from them cost each `analyze` ~0.14 s of CPU,
 * the index ~5 ms. scripts/build-catalogs.ts writes it with the catalogs; a test checks that it
 * is still what the shipped catalogs give.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readShippedCatalogs, SHIPPED_CATALOGS_DIR, type Catalog } from './catalog.js';
import { detectorIndex, type DetectorIndex } from './detect-language.js';

export const DETECTOR_INDEX_FILE = 'detector-index.json';

/**
 * The catalogs a log of unknown major is weighed with: a derived catalog (14, 16) holds only
 * messages its neighbours translate alike, so it never reads a line they do not, and could only
 * win the count where the missing messages would have left a line ambiguous. It serves a server
 * that said its major.
 */
export function exactCatalogs(catalogs: Catalog[]): Catalog[] {
  return catalogs.filter((c) => c.derived === undefined);
}

/** The index of the catalogs in `dir`, as the catalogs give it now. */
export function buildDetectorIndex(dir = SHIPPED_CATALOGS_DIR): DetectorIndex {
  return detectorIndex(exactCatalogs(readShippedCatalogs(null, dir)));
}

/** The index shipped in `dir`; built from its catalogs when none is (a directory of catalogs a test or an operator made). */
export function readDetectorIndex(dir = SHIPPED_CATALOGS_DIR): DetectorIndex {
  const file = path.join(dir, DETECTOR_INDEX_FILE);
  if (!fs.existsSync(file)) return buildDetectorIndex(dir);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as DetectorIndex;
  if (!Array.isArray(parsed.languages)) throw new Error(`${file}: not a pgvigil language detector index (rebuild it: npx tsx scripts/build-catalogs.ts)`);
  return parsed;
}

export function writeDetectorIndex(dir = SHIPPED_CATALOGS_DIR): void {
  fs.writeFileSync(path.join(dir, DETECTOR_INDEX_FILE), `${JSON.stringify(buildDetectorIndex(dir))}\n`);
}
