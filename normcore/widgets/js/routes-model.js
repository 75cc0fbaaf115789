// Chapter 3's explorer as data: the JavaScript twin of normcore/widgets/routes_model.py.
// figures(state) is the batch layer's input gradient three ways (collected by the three
// routes, the finite-difference oracle, the naive d / s) for the block and gradient chosen.

import {affine, naiveBackward, standardise, standardiseBackward} from "./standardise.js";
import {InputError, quoted, readMatrix, readNumber, strip} from "./input.js";
import {CONFIG} from "./config.js";

// Python's constants (routes_model, experiments/routes.py), written in by the bundler
export const MAX_ROWS = CONFIG.routes.MAX_ROWS;
export const MAX_COLUMNS = CONFIG.routes.MAX_COLUMNS;
const {LIMIT, EPSILON, SEED_HIGH, SIGN_FLOOR, WORKED} = CONFIG.routes;
const STEP = CONFIG.routes.STEP;
const {SOURCES, GRADS} = CONFIG.routes;   // the oracle's step, as compare_gradients takes it

/** `count` numbers (k - low) / 100, k from a 32-bit linear congruential generator (as Python). */
export function seeded(seed, count, low, high) {
  let s = seed >>> 0;
  const out = [];
  for (let n = 0; n < count; n++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    out.push(((s >>> 8) % (high + low + 1) - low) / 100);
  }
  return out;
}

function whole(text, name, low, high) {
  const value = readNumber(text, name);
  if (!Number.isInteger(value) || value < low || value > high) {
    throw new InputError(`${name}: expected a whole number from ${low} to ${high}, ` +
      `got ${quoted(strip(text))}`);
  }
  return value;
}

function rowsOf(values, columns) {
  const out = [];
  for (let i = 0; i < values.length; i += columns) out.push(values.slice(i, i + columns));
  return out;
}

/** A matrix typed as rows on lines (or split by ';'), numbers split by commas or spaces: the
 * one grammar of input.js, within this explorer's limits (as routes_model.parse_matrix). */
export function parseMatrix(text, name = "input x") {
  return readMatrix(text, name, LIMIT, MAX_ROWS, MAX_COLUMNS);
}

export function inputRows(state) {
  if (state.source === "worked") return WORKED.map((r) => r.slice());
  if (state.source === "random") {
    const rows = whole(state.rows, "rows", 1, MAX_ROWS);
    const columns = whole(state.columns, "columns", 1, MAX_COLUMNS);
    const seed = whole(state.seed, "seed", 0, SEED_HIGH);
    return rowsOf(seeded(seed, rows * columns, 500, 1000), columns);
  }
  return parseMatrix(state.typed);
}

export function arriving(state, rows, columns) {
  if (state.grad === "counting") return rowsOf([...Array(rows * columns).keys()].map((k) => k + 1), columns);
  if (state.grad === "ones") return rowsOf(Array(rows * columns).fill(1), columns);
  if (state.grad === "random") {
    return rowsOf(seeded(whole(state.seed, "seed", 0, SEED_HIGH) + 1, rows * columns, 100, 100), columns);
  }
  const grad = parseMatrix(state.typed_grad, "grad");
  if (grad.length !== rows || grad[0].length !== columns) {
    throw new InputError(`gradient: expected the shape of x, ${rows} x ${columns}, ` +
      `got ${grad.length} x ${grad[0].length}`);
  }
  return grad;
}

/** The batch layer's output while training (scale 1, shift 0). */
function forward(x) {
  const ones = x[0].map(() => 1);
  return affine(standardise(x, 0, EPSILON).z, ones, ones.map(() => 0));
}

/** Central differences of sum(d * forward(x)), cell by cell (normcore/oracle.py). */
export function finiteDifference(x, d, step = STEP) {
  const objective = (b) => forward(b).flat().reduce((sum, v, k) => sum + d.flat()[k] * v, 0);
  return x.map((row, i) => row.map((keep, j) => {
    const nudged = x.map((r) => r.slice());
    nudged[i][j] = keep + step;
    const up = objective(nudged);
    nudged[i][j] = keep - step;
    const down = objective(nudged);
    return (up - down) / (2 * step);
  }));
}

const largest = (x) => Math.max(...x.flat().map(Math.abs));
const columnSums = (x) => x[0].map((_, j) => x.reduce((sum, row) => sum + row[j], 0));

/** The page's figures for the state; throws InputError for input that cannot be used. */
export function figures(state) {
  if (!SOURCES.includes(state.source) || !GRADS.includes(state.grad)) {
    throw new InputError(`state: source ${quoted(state.source)} or gradient ` +
      `${quoted(state.grad)} is not offered`);
  }
  const x = inputRows(state);
  const d = arriving(state, x.length, x[0].length);
  const st = standardise(x, 0, EPSILON);
  const truth = standardiseBackward(st, d);
  const naive = naiveBackward(st, d);
  const oracle = finiteDifference(x, d);
  const gap = (a) => largest(a.map((row, i) => row.map((v, j) => v - oracle[i][j])));
  const scale = Math.max(1, largest(naive));
  let wrong = 0;
  truth.forEach((row, i) => row.forEach((t, j) => {
    if (Math.abs(t) > SIGN_FLOOR * scale && Math.sign(naive[i][j]) * Math.sign(t) < 0) wrong += 1;
  }));
  return {
    true: truth, oracle, naive, true_gap: gap(truth), naive_error: gap(naive),
    largest_true: largest(truth), wrong_sign: wrong, cells: x.length * x[0].length,
    true_sums: columnSums(truth), naive_sums: columnSums(naive),
  };
}

/** The reader sets one control (what the view's form does for each field). */
export function choose(state, key, value) {
  return {...state, [key]: value};
}
