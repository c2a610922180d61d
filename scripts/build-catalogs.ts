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
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { firstForms, readMoMessages, SHIPPED_CATALOGS_DIR, type Catalog } from '../src/parsers/lang/catalog.js';
import { libcMsgids, postgresMsgids } from '../src/parsers/lang/messages.js';

const DEFAULT_SOURCES = [
  '13=/tmp/lang/pg13/usr/share/locale',
  '15=/usr/share/locale',
  '17=/tmp/lang/pg17/usr/share/locale',
  '18=/tmp/lang/pg18/usr/share/locale',
  '19=/var/lib/pgvigil/pg19-chroot/usr/share/locale',
];
/** The C library's catalogs: the host's (glibc's strsignal texts hardly change between releases). */
const LIBC_LOCALE_DIR = '/usr/share/locale';

function main(): void {
  const { values } = parseArgs({ options: { source: { type: 'string', multiple: true }, out: { type: 'string', default: SHIPPED_CATALOGS_DIR } } });
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
      const outFile = path.join(values.out ?? SHIPPED_CATALOGS_DIR, `pg${major}`, `${language}.json`);
      fs.mkdirSync(path.dirname(outFile), { recursive: true });
      fs.writeFileSync(outFile, `${JSON.stringify(catalog, null, 1)}\n`);
      written.push(`${language} (${Object.keys(catalog.messages).length})`);
    }
    console.log(`PG ${major}: ${written.join(', ') || 'no catalogs'}`);
  }
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

main();
