/**
 * Reads PostgreSQL's `src/backend/utils/errcodes.txt` (installed as `share/errcodes.txt`): the
 * SQLSTATE classes (`Section: Class 23 - Integrity Constraint Violation`) and each code's
 * condition name (`23505    E    ERRCODE_UNIQUE_VIOLATION    unique_violation`). Used by
 * scripts/build-errcodes-table.ts to generate errcodes-table.ts and by its test to check the
 * shipped table against every installed server's file.
 */

export interface Errcodes {
  /** Class (the first two characters of a SQLSTATE) to its name. */
  classes: Record<string, string>;
  /** SQLSTATE to its condition name; codes listed without one (aliases such as 2202E's second line) keep the first. */
  conditions: Record<string, string>;
}

const SECTION = /^Section: Class ([0-9A-Z]{2}) - (.+)$/;
const CODE = /^([0-9A-Z]{5})\s+[EWS]\s+ERRCODE_\w+(?:\s+(\w+))?\s*$/;

export function parseErrcodesTxt(text: string, file: string): Errcodes {
  const errcodes: Errcodes = { classes: {}, conditions: {} };
  text.split('\n').forEach((line, index) => {
    if (line === '' || line.startsWith('#')) return;
    const section = SECTION.exec(line);
    if (section) {
      errcodes.classes[section[1]!] = section[2]!.trim();
      return;
    }
    const code = CODE.exec(line);
    if (!code) throw new Error(`${file}:${index + 1}: neither a Section: line nor a code line: ${JSON.stringify(line)}`);
    if (code[2] !== undefined) errcodes.conditions[code[1]!] ??= code[2];
  });
  return errcodes;
}
