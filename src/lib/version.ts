/** pgvigil's version, from package.json (one level above src/ and dist/). */
import { readFileSync } from 'node:fs';

export const PGVIGIL_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
