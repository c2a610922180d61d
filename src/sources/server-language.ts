/**
 * The language a live server writes its log in: its lc_messages and major (pg_settings), read
 * with the message catalog of its own installation (`LOCALEDIR` of pg_config, Debian's
 * /usr/share/locale when the role may not read pg_config), else the shipped one. Pure but for
 * reading the catalog; `pgvigil run` and `pgvigil check` say the same thing from it.
 */
import type pg from 'pg';
import { serverLanguage, type LanguageChoice } from '../parsers/lang/index.js';

/** The pseudo-setting under which the server's LOCALEDIR (pg_config) is kept. */
export const LOCALE_DIR_SETTING = 'pg_config_localedir';
/** Where Debian's and RHEL's packages put the catalogs (LOCALEDIR of a packaged server). */
export const DEFAULT_LOCALE_DIR = '/usr/share/locale';

export interface ServerLanguage extends LanguageChoice {
  lcMessages: string;
  major: number;
}

/** The server's LOCALEDIR; null when the role may not read pg_config (superusers only by default). */
export async function readLocaleDir(client: pg.Client): Promise<string | null> {
  const result = await client.query<{ setting: string }>("SELECT setting FROM pg_config WHERE name = 'LOCALEDIR'").catch(() => null);
  return result?.rows[0]?.setting ?? null;
}

/** The server's log language from its settings; null when they do not say (the server was not asked). */
export function languageOfServer(server: Readonly<Record<string, string>>): ServerLanguage | null {
  const lcMessages = server.lc_messages;
  const versionNum = Number(server.server_version_num);
  if (lcMessages === undefined || !Number.isInteger(versionNum) || versionNum <= 0) return null;
  const major = Math.floor(versionNum / 10_000);
  return { ...serverLanguage(lcMessages, major, server[LOCALE_DIR_SETTING] ?? DEFAULT_LOCALE_DIR), lcMessages, major };
}

/** One line for the operator: in which language the log is read, with which catalog. */
export function describeServerLanguage(found: ServerLanguage): string {
  const setting = found.setting;
  if (setting === undefined) return `lc_messages "${found.lcMessages}": the log is read as English`;
  const translator = 'translator' in setting ? setting.translator : null;
  return `lc_messages "${found.lcMessages}": the log is read in ${translator?.language ?? 'a detected language'} with ${translator?.catalogs ?? `the PostgreSQL ${found.major} message catalog`}`;
}
