// What a reader types into a widget, read as normcore/widgets/_input.py reads it. The grammar
// (patterns, limits, how a sentence quotes a text) is not typed here: the bundler writes
// Python's into CONFIG.input, and this file compiles the same patterns. Nothing is evaluated.

import {CONFIG} from "./config.js";

const G = CONFIG.input;
/** A number as a reader types it (see _input.NUMBER_PATTERN). */
const NUMBER = new RegExp(`^(?:${G.NUMBER})$`);
const EDGES = new RegExp(`^${G.SPACE}+|${G.SPACE}+$`, "g");
const ROW_BREAK = new RegExp(G.ROW_BREAK);
const CELL_BREAK = new RegExp(G.CELL_BREAK);
/** The longest text a number box accepts, in characters (code points, as Python counts). */
export const LONGEST = G.LONGEST;

/** The characters of `text` as Python counts them (code points, not UTF-16 units). */
const characters = (text) => Array.from(text);

/** `text` without the spaces and tabs around it (as _input.strip). */
export function strip(text) {
  return text.replace(EDGES, "");
}

/** The first G.QUOTED characters of `text` quoted as a sentence shows them (as _input.quoted). */
export function quoted(text) {
  const chars = characters(text);
  const shown = chars.slice(0, G.QUOTED).map((c) => {
    const code = c.codePointAt(0);
    if (c === "\\" || c === "'") return "\\" + c;
    if (code >= 0x20 && code <= 0x7e) return c;
    if (code <= 0xffff) return "\\u" + code.toString(16).padStart(4, "0");
    return "\\U" + code.toString(16).padStart(8, "0");
  });
  return "'" + shown.join("") + (chars.length > G.QUOTED ? "…" : "") + "'";
}

/** A limit as the sentences write it: a whole number with commas (as _input.grouped). */
export function grouped(limit) {
  return String(Math.round(limit)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * The number `text` holds, as {value}, or {error: sentence} naming the box (`name`).
 * Refused: empty, longer than LONGEST, not a number (words, expressions, nan, inf), too large
 * for a float (1e400), beyond ±limit.
 */
export function parseNumber(text, name, limit = Infinity) {
  if (typeof text !== "string") return {error: `${name} is not text`};
  if (characters(text).length > LONGEST) {
    return {error: `${name}: ${quoted(text)} is longer than ${LONGEST} characters`};
  }
  const stripped = strip(text);
  if (!stripped) return {error: `${name} is empty`};
  if (!NUMBER.test(stripped)) return {error: `${name}: ${quoted(text)} is not a number`};
  const value = Number(stripped);
  if (!Number.isFinite(value)) {
    return {error: `${name}: ${quoted(text)} is too large to be a number here`};
  }
  if (Math.abs(value) > limit) {
    return {error: `${name}: ${quoted(text)} is beyond ±${grouped(limit)}`};
  }
  return {value};
}

/** A reader's input that cannot be used (a NormcoreError in Python): the sentence says why.
 * Every computing model throws it, and its view shows the sentence. */
export class InputError extends Error {}

/** The number `text` holds; otherwise an InputError with parseNumber's sentence (as Python's
 * parse_number raises it). */
export function readNumber(text, name, limit = Infinity) {
  const parsed = parseNumber(text, name, limit);
  if (parsed.error !== undefined) throw new InputError(parsed.error);
  return parsed.value;
}

/** The rows of numbers typed into a block box (as _input.parse_matrix); InputError otherwise. */
export function readMatrix(text, name, limit, maxRows, maxColumns) {
  if (typeof text !== "string") throw new InputError(`${name} is not text`);
  if (characters(text).length > G.MATRIX_LONGEST) {
    throw new InputError(`${name} is longer than ${G.MATRIX_LONGEST} characters`);
  }
  const rows = [];
  for (const line of text.split(ROW_BREAK)) {
    const cells = line.split(CELL_BREAK).filter((c) => c !== "");
    if (cells.length) {
      rows.push(cells.map((c) => readNumber(c, `${name}, row ${rows.length + 1}`, limit)));
    }
  }
  if (!rows.length) throw new InputError(`${name}: type at least one row of numbers`);
  const widths = [...new Set(rows.map((r) => r.length))].sort((a, b) => a - b);
  if (widths.length !== 1) {
    throw new InputError(`${name}: every row needs the same number of entries, ` +
      `got [${widths.join(", ")}]`);
  }
  if (rows.length > maxRows || widths[0] > maxColumns) {
    throw new InputError(`${name}: at most ${maxRows} rows and ${maxColumns} columns, ` +
      `got ${rows.length} x ${widths[0]}`);
  }
  return rows;
}

/** One sentence for the reader, as friendly() words it in Python. */
export function friendly(message) {
  return message.charAt(0).toUpperCase() + message.slice(1) + ".";
}
