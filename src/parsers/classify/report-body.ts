/**
 * The lines of a vacuum or analyze report after its header, read into one details object.
 *
 * A busy server writes thousands of reports, and those of one table come in a few shapes (the
 * same lines, each with the same parts, as many index lines as the table has indexes; an index
 * scan needed or not). So a report is first tried against one regex per shape of its table's
 * recent reports, the last seen first: a line regex each, joined by newlines, one exec instead of
 * a dozen line lookups, cuts and matches. A report of another shape is read line by line
 * (forEachLaterLine, a parser per line key, unknown lines kept) and, when every line was
 * recognised, its shape is kept for the table's next ones.
 * Both readings give the same details: the shape regex only matches a report whose every line its
 * line's parser would have read with the same regex pieces.
 */
import { forEachLaterLine, type LineParser, type LineShape } from './usage-lines.js';

/** Report shapes kept per reader: a server prints a handful (index counts vary); odd input must not grow memory. */
const MAX_REPORT_SHAPES = 64;
/** Tables whose shapes are remembered; past this, new tables are read line by line. */
const MAX_SHAPED_TABLES = 10_000;
/**
 * Shapes remembered per table, the most recently seen first. A busy table cycles through more than
 * three (index scan needed, not needed or bypassed; new relfrozenxid or not; tuples missed): with
 * three kept, 6% of a PG 18 server's vacuum reports were read line by line.
 */
const SHAPES_PER_TABLE = 8;

interface ReportShape<T> {
  /** Sticky, from the newline that ends the header to the end of the report. */
  regex: RegExp;
  lines: readonly LineShape<T>[];
}

export class ReportBody<T> {
  /** Reports read by a shape's regex, and line by line. */
  readonly reads = { shaped: 0, lineByLine: 0 };
  /** The shapes of a table's recent reports, the last first, by the table's name as the header prints it. */
  private readonly recentByTable = new Map<string, Array<ReportShape<T>>>();
  private readonly shapes = new Map<string, ReportShape<T>>();

  /** @param parserFor the parser of a line (by its key), undefined when no parser knows it. */
  constructor(private readonly parserFor: (line: string) => LineParser<T> | undefined) {}

  /**
   * Reads every line after the first of `message`, the report of `table`, into `into`; a line not
   * recognised whole goes to `unknown`.
   */
  read(message: string, table: string, into: T, unknown: string[]): void {
    const headerEnd = message.indexOf('\n');
    if (headerEnd === -1) return;
    const recent = this.recentByTable.get(table);
    if (recent !== undefined) {
      for (let i = 0; i < recent.length; i++) {
        const shape = recent[i]!;
        shape.regex.lastIndex = headerEnd;
        const groups = shape.regex.exec(message);
        if (groups === null) continue;
        let first = 1;
        for (const line of shape.lines) {
          line.apply(groups, first, into);
          first += line.groups;
        }
        if (i > 0) {
          recent.copyWithin(1, 0, i);
          recent[0] = shape;
        }
        this.reads.shaped++;
        return;
      }
    }
    this.readLineByLine(message, headerEnd, table, into, unknown);
  }

  private readLineByLine(message: string, headerEnd: number, table: string, into: T, unknown: string[]): void {
    this.reads.lineByLine++;
    const lines: LineShape<T>[] = [];
    let shaped = true;
    forEachLaterLine(message, (line) => {
      const parser = this.parserFor(line);
      const read = parser === undefined ? false : parser(line, into);
      if (read === false) unknown.push(line);
      if (typeof read === 'boolean') shaped = false;
      else lines.push(read);
    });
    if (!shaped || lines.length === 0) return;
    const shape = this.shapeOf(lines);
    if (shape === null) return;
    // forEachLaterLine trims lines and skips blank ones; the regex does not: a report with such
    // lines is not a shape to keep.
    shape.regex.lastIndex = headerEnd;
    if (!shape.regex.test(message)) return;
    const recent = this.recentByTable.get(table);
    if (recent !== undefined) {
      recent.unshift(shape);
      if (recent.length > SHAPES_PER_TABLE) recent.pop();
    } else if (this.recentByTable.size < MAX_SHAPED_TABLES) {
      this.recentByTable.set(table, [shape]);
    }
  }

  private shapeOf(lines: readonly LineShape<T>[]): ReportShape<T> | null {
    const key = lines.map((line) => line.id).join(',');
    let shape = this.shapes.get(key);
    if (shape === undefined) {
      if (this.shapes.size >= MAX_REPORT_SHAPES) return null;
      shape = { regex: new RegExp(`${lines.map((line) => `\\n${line.source}`).join('')}$`, 'y'), lines };
      this.shapes.set(key, shape);
    }
    return shape;
  }
}
