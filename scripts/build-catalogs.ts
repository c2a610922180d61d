/**
 * Generates the compact message catalogs shipped in catalogs/pg<major>/<lang>.json: from the
 * PostgreSQL .mo files available on this machine, only the messages pgvigil reads
 * (src/parsers/lang/messages.ts), plus the signal names of the C library's catalog of the same
 * language. Re-run after adding a message to messages.ts, and review the diff.
 *
 *   npx tsx scripts/build-catalogs.ts [--source 15=/usr/share/locale] [--source 19=/chroot/usr/share/locale] ...
 *
 * Without --source: PostgreSQL 15 from Debian (/usr/share/locale), 19 from the test chroot, and
 * 13, 17 and 18 from extracted packages when they lie in /tmp/lang/pg<major>
 * (scripts/fetch-catalog-debs.sh fetches 13 and 17 from Debian's mirror; see NOTICE).
 *
 * Then the majors no package was at hand for are derived from the catalogs written around them
 * (--derive 14=13,15 --derive 16=15,17 by default; src/parsers/lang/derive-catalog.ts), and
 * per language how many messages the neighbours translate alike (kept), differently and only
 * one of them (left out) is printed. Last, the language detector's index of them all
 * (catalogs/detector-index.json, src/parsers/lang/detector-index.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { firstForms, readCatalogFile, readMoMessages, SHIPPED_CATALOGS_DIR, type Catalog } from '../src/parsers/lang/catalog.js';
import { deriveCatalog } from '../src/parsers/lang/derive-catalog.js';
import { writeDetectorIndex } from '../src/parsers/lang/detector-index.js';
import { libcMsgids, postgresMsgids } from '../src/parsers/lang/messages.js';

const DEFAULT_SOURCES = [
  '13=/tmp/lang/pg13/usr/share/locale',
  '15=/usr/share/locale',
  '17=/tmp/lang/pg17/usr/share/locale',
  '18=/tmp/lang/pg18/usr/share/locale',
  '19=/var/lib/pgvigil/pg19-chroot/usr/share/locale',
];
const DEFAULT_DERIVED = ['14=13,15', '16=15,17'];
/** The C library's catalogs: the host's (glibc's strsignal texts hardly change between releases). */
const LIBC_LOCALE_DIR = '/usr/share/locale';

function main(): void {
  const { values } = parseArgs({
    options: { source: { type: 'string', multiple: true }, derive: { type: 'string', multiple: true }, out: { type: 'string', default: SHIPPED_CATALOGS_DIR } },
  });
  const out = values.out ?? SHIPPED_CATALOGS_DIR;
  const sources = values.source ?? DEFAULT_SOURCES;
  const wanted = postgresMsgids();
  for (const source of sources) {
    const [majorText, dir] = source.split('=');
    const major = Number(majorText);
    if (!Number.isInteger(major) || dir === undefined) throw new Error(`--source ${source}: expected <major>=<locale dir>`);
    if (!fs.existsSync(dir)) {
      console.warn(`PG ${major}: ${dir} does not exist, skipped`);
      continue;
    }
    const written: string[] = [];
    for (const language of fs.readdirSync(dir).sort()) {
      const file = path.join(dir, language, 'LC_MESSAGES', `postgres-${major}.mo`);
      if (!fs.existsSync(file)) continue;
      const libc = path.join(LIBC_LOCALE_DIR, language, 'LC_MESSAGES', 'libc.mo');
      const catalog: Catalog = {
        language,
        major,
        source: `postgres-${major}.mo (${language}) of the PostgreSQL ${major} packages`,
        messages: sortedKeys(readMoMessages(fs.readFileSync(file), wanted)),
        signals: fs.existsSync(libc) ? sortedKeys(firstForms(readMoMessages(fs.readFileSync(libc), libcMsgids()))) : {},
      };
      writeCatalog(out, catalog);
      written.push(`${language} (${Object.keys(catalog.messages).length})`);
    }
    console.log(`PG ${major}: ${written.join(', ') || 'no catalogs'}`);
  }
  for (const spec of values.derive ?? DEFAULT_DERIVED) derive(out, spec);
  writeDetectorIndex(out);
}

/** `14=13,15`: the catalog of 14 of every language both 13 and 15 have. */
function derive(out: string, spec: string): void {
  const m = /^(\d+)=(\d+),(\d+)$/.exec(spec);
  if (m === null) throw new Error(`--derive ${spec}: expected <major>=<lower major>,<upper major>`);
  const [major, lower, upper] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const lowerDir = path.join(out, `pg${lower}`);
  const upperDir = path.join(out, `pg${upper}`);
  if (!fs.existsSync(lowerDir) || !fs.existsSync(upperDir)) throw new Error(`--derive ${spec}: ${lowerDir} and ${upperDir} must be built first`);
  const written: string[] = [];
  for (const file of fs.readdirSync(lowerDir).filter((f) => f.endsWith('.json')).sort()) {
    if (!fs.existsSync(path.join(upperDir, file))) continue;
    const d = deriveCatalog(readCatalogFile(path.join(lowerDir, file)), readCatalogFile(path.join(upperDir, file)), major);
    writeCatalog(out, d.catalog);
    written.push(`${d.catalog.language} (${d.agree} alike, ${d.differ} differ, ${d.onlyOne} in one only)`);
  }
  console.log(`PG ${major} derived from ${lower} and ${upper}: ${written.join(', ') || 'no language both have'}`);
}

function writeCatalog(out: string, catalog: Catalog): void {
  const file = path.join(out, `pg${catalog.major}`, `${catalog.language}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(catalog, null, 1)}\n`);
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

main();
