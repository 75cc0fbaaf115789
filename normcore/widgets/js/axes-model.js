// Chapter 4's explorer as data: the JavaScript twin of normcore/widgets/axes_model.py.
// Every normaliser here is standardise.js along one axis of a 2-D view: each statistic's cells
// gathered into one row (batch norm on images: a channel's cells over all images and pixels;
// instance: one image's channel; group: one image's group of channels; layer and RMS: one row,
// or one whole image), standardised along that row, and scattered back.

import {standardise, standardiseBackward} from "./standardise.js";
import {InputError, readNumber, strip} from "./input.js";
import {CONFIG} from "./config.js";

// Python's constants (the layers' default ε, experiments/axes.py's step, the image shape)
const {EPSILON, STEP, CHANNELS} = CONFIG.axes;

export function groups(state) {
  const value = readNumber(state.groups, "groups");
  if (!Number.isInteger(value) || value < 1 || CHANNELS % value) {
    throw new InputError(`groups: expected a whole number >= 1 that divides the ${CHANNELS} ` +
      `channels, got ${strip(state.groups)}`);
  }
  return value;
}

/** Which statistic each cell (in C order) is counted in, and the statistics' shape. */
function layout(shape, axis, g) {
  if (shape.length === 2) {
    const [rows, features] = shape;
    if (axis === "instance" || axis === "group") {
      throw new InputError(`${axis} norm reads image axes: it needs an image batch ` +
        "(N, C, H, W), not a (rows, features) input");
    }
    const of = (k) => (axis === "batch" ? k % features : Math.floor(k / features));
    return {of, stats: axis === "batch" ? [features] : [rows]};
  }
  const [n, c, h, w] = shape;
  const image = (k) => Math.floor(k / (c * h * w));
  const channel = (k) => Math.floor(k / (h * w)) % c;
  return {
    batch: {of: channel, stats: [c]},
    layer: {of: image, stats: [n]},
    rms: {of: image, stats: [n]},
    instance: {of: (k) => image(k) * c + channel(k), stats: [n, c]},
    group: {of: (k) => image(k) * g + Math.floor(channel(k) / (c / g)), stats: [n, g]},
  }[axis];
}

/** The statistics' rows of a flat array: rows[s] lists cell indices of statistic s in order. */
function members(size, of, count) {
  const rows = Array.from({length: count}, () => []);
  for (let k = 0; k < size; k++) rows[of(k)].push(k);
  return rows;
}

const gather = (flat, rows) => rows.map((r) => r.map((k) => flat[k]));
function scatter(matrix, rows, size) {
  const flat = Array(size);
  rows.forEach((r, s) => r.forEach((k, m) => { flat[k] = matrix[s][m]; }));
  return flat;
}

function shapeOf(x) {
  const shape = [];
  for (let a = x; Array.isArray(a); a = a[0]) shape.push(a.length);
  return shape;
}

/** The page's figures; throws InputError for what cannot be computed. */
export function figures(state, values) {
  const x = values[state.data];
  const shape = shapeOf(x);
  const flat = x.flat(3);
  const g = state.axis === "group" ? groups(state) : 2;
  const {of, stats} = layout(shape, state.axis, g);
  const rows = members(flat.length, of, stats.reduce((a, b) => a * b, 1));
  const centre = state.axis !== "rms";
  const forward = (b) => scatter(standardise(gather(b, rows), 1, EPSILON, centre).z, rows, b.length);
  const d = flat.map((_, k) => (k + 1) / flat.length);   // counting, scaled to at most one

  const st = standardise(gather(flat, rows), 1, EPSILON, centre);
  const truthRows = standardiseBackward(st, gather(d, rows));
  const truth = scatter(truthRows, rows, flat.length);
  const objective = (b) => forward(b).reduce((sum, v, k) => sum + d[k] * v, 0);
  const oracle = flat.map((keep, k) => {
    const nudged = flat.slice();
    nudged[k] = keep + STEP;
    const up = objective(nudged);
    nudged[k] = keep - STEP;
    return (up - objective(nudged)) / (2 * STEP);
  });
  const output = scatter(st.z, rows, flat.length);
  const width = shape[shape.length - 1];
  const shownCells = shape.length === 2 ? output : output.slice(0, shape[2] * width);
  const shown = [];
  for (let k = 0; k < shownCells.length; k += width) shown.push(shownCells.slice(k, k + width));
  return {
    output: shown,
    statistics_shape: stats,
    count: rows[0].length,
    true_gap: Math.max(...truth.map((t, k) => Math.abs(t - oracle[k]))),
    largest_true: Math.max(...truth.map(Math.abs)),
    largest_sum: Math.max(...truthRows.map((r) => Math.abs(r.reduce((a, b) => a + b, 0)))),
    centred: centre,
  };
}

/** The reader sets one control (what the view's form does for each field). */
export function choose(state, key, value) {
  return {...state, [key]: value};
}
