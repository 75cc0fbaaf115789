// What a reader types into a widget, read as normcore/widgets/_input.py reads it: the same
// pattern, the same limits, the same sentences. Nothing is evaluated.

/** A number as a reader types it: sign, digits with an optional point, optional exponent. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** The longest text a box accepts. */
export const LONGEST = 40;

/** Python's repr of a short string, for the error sentences ('abc'). */
function quoted(text) {
  const shown = text.length <= 12 ? text : text.slice(0, 12) + "…";
  return shown.includes("'") && !shown.includes('"')
    ? `"${shown}"`
    : `'${shown.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/**
 * The number `text` holds, as {value}, or {error: sentence} naming the box (`name`).
 * Refused: empty, longer than LONGEST, not a number (words, expressions, nan, inf), too large
 * for a float (1e400), beyond ±limit.
 */
export function parseNumber(text, name, limit = Infinity) {
  if (typeof text !== "string") return {error: `${name} is not text`};
  if (text.length > LONGEST) {
    return {error: `${name}: ${quoted(text)} is longer than ${LONGEST} characters`};
  }
  const stripped = text.trim();
  if (!stripped) return {error: `${name} is empty`};
  if (!NUMBER.test(stripped)) return {error: `${name}: ${quoted(text)} is not a number`};
  const value = Number(stripped);
  if (!Number.isFinite(value)) {
    return {error: `${name}: ${quoted(text)} is too large to be a number here`};
  }
  if (Math.abs(value) > limit) {
    const bound = limit.toLocaleString("en-US", {maximumFractionDigits: 0});  // as {:,.0f}
    return {error: `${name}: ${quoted(text)} is beyond ±${bound}`};
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

/** One sentence for the reader, as friendly() words it in Python. */
export function friendly(message) {
  return message.charAt(0).toUpperCase() + message.slice(1) + ".";
}
