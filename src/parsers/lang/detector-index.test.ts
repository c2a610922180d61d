import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHIPPED_CATALOGS_DIR } from './catalog.js';
import { buildDetectorIndex, DETECTOR_INDEX_FILE, readDetectorIndex } from './detector-index.js';

describe('language detector index', () => {
  it('is what the shipped catalogs give (after changing a catalog or messages.ts: npx tsx scripts/build-catalogs.ts)', () => {
    const shipped = JSON.parse(fs.readFileSync(path.join(SHIPPED_CATALOGS_DIR, DETECTOR_INDEX_FILE), 'utf8')) as unknown;
    expect(shipped).toEqual(buildDetectorIndex());
  });

  it('is built from the catalogs of a directory that ships none', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-detector-index-'));
    try {
      fs.mkdirSync(path.join(dir, 'pg15'));
      fs.copyFileSync(path.join(SHIPPED_CATALOGS_DIR, 'pg15', 'de.json'), path.join(dir, 'pg15', 'de.json'));
      const index = readDetectorIndex(dir);
      expect(index.languages.map((l) => l.language)).toEqual(['de']);
      expect(index.languages[0]!.tokens).toContain('FEHLER:  ');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
