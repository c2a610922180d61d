/** The part of gettext-parser 10 (no bundled types) pgvigil uses: reading a compiled .mo catalog. */
declare module 'gettext-parser' {
  export interface GetTextTranslation {
    msgctxt?: string;
    msgid: string;
    msgid_plural?: string;
    msgstr: string[];
  }
  export interface GetTextTranslations {
    charset: string;
    headers: Record<string, string>;
    translations: Record<string, Record<string, GetTextTranslation>>;
  }
  export const mo: {
    parse(buffer: Buffer, defaultCharset?: string): GetTextTranslations;
  };
}
