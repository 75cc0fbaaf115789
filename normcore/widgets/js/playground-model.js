// Chapter 2's playground as data: the JavaScript twin of normcore/widgets/playground_model.py.
// The state is the same JSON dictionary (texts, values, active, kind, mode, scale, shift,
// running_mean, running_var, steps, note); every action returns a new state and leaves the
// one passed in alone; figures(state) is every number the readout shows, computed with the
// routine in standardise.js (one forward pass).

import {affine, foldIn, standardise, standardiseBy} from "./standardise.js";
import {parseNumber} from "./input.js";
import {CONFIG} from "./config.js";

// Python's constants (playground_model), written in by the bundler
export const MAX_ROWS = CONFIG.playground.MAX_ROWS;
export const MAX_FEATURES = CONFIG.playground.MAX_FEATURES;
export const LIMIT = CONFIG.playground.LIMIT;
export const EPSILON = CONFIG.playground.EPSILON;
export const MOMENTUM = CONFIG.playground.MOMENTUM;

export function cellName(i, j) {
  return `row ${i + 1}, feature ${j + 1}`;
}

/** {value} for the text typed into cell (i, j), or {error: why it cannot be used}. */
export function parseCell(text, i, j) {
  return parseNumber(text, cellName(i, j), LIMIT);
}

// ------------------------------------------------------------------------- reading a state
/** The rows switched on: the input x the layer normalises (possibly with no rows). */
export function inputRows(state) {
  return state.values.filter((_, i) => state.active[i]);
}

/** Why each cell whose text is not a usable number was set aside, one sentence each. */
export function errors(state) {
  const found = [];
  state.texts.forEach((row, i) => row.forEach((text, j) => {
    const parsed = parseCell(text, i, j);
    if (parsed.error) found.push(parsed.error);
  }));
  return found;
}

function runningDivisor(state) {
  return state.running_var.map((v) => Math.sqrt(v + EPSILON));
}

/**
 * Every number the readout shows, under the keys figures() uses in Python: rows_on, output
 * (null when no row is on), gap; batch_* and running_* for the batch layer; row_* otherwise.
 */
export function figures(state) {
  const x = inputRows(state);
  const out = {rows_on: state.active.flatMap((on, i) => (on ? [i] : []))};
  if (x.length === 0) return {...out, output: null, gap: null};
  if (state.kind === "batch") {
    const batch = standardise(x, 0, EPSILON);
    const used = state.mode === "train"
      ? batch
      : standardiseBy(x, [state.running_mean], [runningDivisor(state)], 0);
    out.output = affine(used.z, state.scale, state.shift);
    out.batch_mean = batch.mean[0];
    out.batch_variance = batch.variance[0];
    out.batch_divisor = batch.divisor[0];
    out.batch_share = batch.variance[0].map((v) => v / (v + EPSILON));
    out.running_mean = state.running_mean.slice();
    out.running_var = state.running_var.slice();
    out.running_divisor = runningDivisor(state);
  } else {
    const st = standardise(x, 1, EPSILON, state.kind === "layer");
    out.output = affine(st.z, state.scale, state.shift);
    if (st.mean !== null) out.row_mean = st.mean.map((m) => m[0]);
    out.row_variance = st.variance.map((v) => v[0]);
    out.row_divisor = st.divisor.map((s) => s[0]);
  }
  let gap = 0;
  out.output.forEach((row, i) => row.forEach((v, j) => {
    gap = Math.max(gap, Math.abs(v - x[i][j]));
  }));
  out.gap = gap;
  return out;
}

// ---------------------------------------------------------------------------------- actions
function renewed(state, note = null) {
  const fresh = JSON.parse(JSON.stringify(state));
  fresh.note = note;
  return fresh;
}

/** Type `text` into cell (i, j): shown as typed; used only if it is a number we can use. */
export function setCell(state, i, j, text) {
  const next = renewed(state);
  next.texts[i][j] = text;
  const parsed = parseCell(text, i, j);
  if (parsed.error === undefined) next.values[i][j] = parsed.value;
  return next;
}

export function setActive(state, i, on) {
  const next = renewed(state);
  next.active[i] = Boolean(on);
  return next;
}

export function setKind(state, kind) {
  const next = renewed(state);
  next.kind = kind;
  return next;
}

export function setMode(state, mode) {
  const next = renewed(state);
  next.mode = mode;
  return next;
}

/** Move feature j's scale or shift slider to `value`. */
export function setParameter(state, which, j, value) {
  const next = renewed(state);
  next[which][j] = value;
  return next;
}

/** Undo exactly: scale = the deviation, shift = the mean the batch layer standardises by. */
export function undo(state) {
  const x = inputRows(state);
  if (x.length === 0) return renewed(state, "undo-needs-rows");
  if (state.kind !== "batch") return renewed(state, "undo-not-batch");
  const next = renewed(state, `undo-${state.mode}`);
  if (state.mode === "train") {
    const batch = standardise(x, 0, EPSILON);
    next.scale = batch.divisor[0];
    next.shift = batch.mean[0];
  } else {
    next.scale = runningDivisor(state);
    next.shift = state.running_mean.slice();
  }
  return next;
}

/** One real step with a zero gradient: the batch's mean and biased variance folded in. */
export function step(state) {
  const x = inputRows(state);
  if (x.length === 0) return renewed(state, "step-needs-rows");
  if (state.kind !== "batch") return renewed(state, "step-not-batch");
  const batch = standardise(x, 0, EPSILON);
  const next = renewed(state, "step");
  next.running_mean = foldIn(state.running_mean, batch.mean[0], MOMENTUM);
  next.running_var = foldIn(state.running_var, batch.variance[0], MOMENTUM);
  next.steps = state.steps + 1;
  return next;
}

/** A fresh layer: scale 1, shift 0, running mean 0, running variance 1. */
export function fresh(state) {
  const f = state.scale.length;
  const next = renewed(state, "fresh");
  next.scale = Array(f).fill(1);
  next.shift = Array(f).fill(0);
  next.running_mean = Array(f).fill(0);
  next.running_var = Array(f).fill(1);
  next.steps = 0;
  return next;
}

/** Add (+1) or drop (-1) the last row or feature; new cells are 0, a new feature fresh. */
export function resize(state, rows = 0, features = 0) {
  const nRows = state.texts.length + rows;
  const nFeatures = state.scale.length + features;
  if (nRows < 1 || nRows > MAX_ROWS || nFeatures < 1 || nFeatures > MAX_FEATURES) {
    return renewed(state, "size-limits");
  }
  const next = renewed(state);
  const f = state.scale.length;
  if (rows > 0) {
    next.texts.push(Array(f).fill("0"));
    next.values.push(Array(f).fill(0));
    next.active.push(true);
  } else if (rows < 0) {
    next.texts.pop();
    next.values.pop();
    next.active.pop();
  }
  const starts = {scale: 1, shift: 0, running_mean: 0, running_var: 1};
  if (features > 0) {
    next.texts.forEach((row) => row.push("0"));
    next.values.forEach((row) => row.push(0));
    for (const [key, start] of Object.entries(starts)) next[key].push(start);
  } else if (features < 0) {
    next.texts.forEach((row) => row.pop());
    next.values.forEach((row) => row.pop());
    for (const key of Object.keys(starts)) next[key].pop();
  }
  return next;
}
