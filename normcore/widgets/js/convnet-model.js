// Chapter 10's widget as data: the JavaScript twin of normcore/widgets/convnet_model.py.
// How many values each statistic of a normaliser pools after the chapter's two convolutions
// (8 channels of 8 x 8, then of 4 x 4 pixels), and, for batch norm, how far one device's
// variance of a channel strays from the whole sample's: a device's variance is the mean of its
// images' variances plus the variance of their means (every image has the same pixel count),
// read from the case's per-image figures (normcore/experiments/convnet.py, variance_ratios).

import {InputError, readNumber} from "./input.js";

export const NORMALISERS = ["batch", "layer", "instance", "group"];
/** The images of the sample the widget reads (the largest per-device batch it takes). */
export const IMAGES = 64;
export const CHANNELS = 8;
const SIDES = [8, 4];

function whole(state, key, name, lowest, highest) {
  const value = readNumber(state[key], name);
  if (!Number.isInteger(value) || value < lowest || value > highest) {
    throw new InputError(`${name}: expected a whole number from ${lowest} to ${highest}, ` +
      `got ${state[key].trim()}`);
  }
  return value;
}

/** The normaliser, the images a device holds and the group count (as convnet_model.parse). */
export function parse(state) {
  const kind = state.normaliser;
  if (!NORMALISERS.includes(kind)) {
    throw new InputError(`normaliser: expected one of ('batch', 'layer', 'instance', 'group'), ` +
      `got '${kind}'`);
  }
  const perDevice = whole(state, "per_device", "images a device holds", 1, IMAGES);
  let groups = {layer: 1, instance: CHANNELS, batch: 1}[kind];
  if (groups === undefined) {
    groups = whole(state, "groups", "groups", 1, CHANNELS);
    if (CHANNELS % groups) {
      throw new InputError(`groups: expected a whole number that divides the ${CHANNELS} ` +
        `channels, got ${groups}`);
    }
  }
  return [kind, perDevice, groups];
}

/** Values each statistic is read from after a convolution of side x side pixels. */
function pooled(kind, perDevice, groups, side) {
  return kind === "batch" ? perDevice * side * side : (CHANNELS / groups) * side * side;
}

const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** The variance of one channel over a set of images, from their means and variances. */
function pooledVariance(means, variances) {
  const centre = mean(means);
  return mean(variances.map((v, i) => v + (means[i] - centre) ** 2));
}

/** Each device's variance of each channel over the whole sample's, [devices][channels]. */
export function ratios(c, perDevice) {
  const devices = Math.floor(IMAGES / perDevice);
  const used = devices * perDevice;
  const column = (rows, j) => rows.map((row) => row[j]);
  const whole = [...Array(CHANNELS).keys()].map((j) =>
    pooledVariance(column(c.means.slice(0, used), j), column(c.variances.slice(0, used), j)));
  return [...Array(devices).keys()].map((d) => {
    const rows = [d * perDevice, (d + 1) * perDevice];
    return whole.map((w, j) => pooledVariance(column(c.means.slice(...rows), j),
      column(c.variances.slice(...rows), j)) / w);
  });
}

/** The figures for `state` (as convnet_model.figures), from the case `c`. */
export function figures(state, c) {
  const [kind, perDevice, groups] = parse(state);
  const out = {
    pooled: SIDES.map((side) => pooled(kind, perDevice, groups, side)),
    statistics: kind === "batch" ? CHANNELS : perDevice * groups,
  };
  let runs;
  if (kind === "batch") {
    const r = ratios(c, perDevice);
    out.devices = r.length;
    out.ratio_mean = mean(r.flat());
    const spread = r[0].map((_, j) => {
      const m = mean(r.map((row) => row[j]));
      return Math.sqrt(mean(r.map((row) => (row[j] - m) ** 2)));
    });
    out.ratio_spread = mean(spread);
    runs = c.accuracy.batch[String(perDevice)];
  } else {
    runs = kind !== "group" || groups === c.groups ? c.accuracy[kind] : undefined;
  }
  if (runs !== undefined) out.accuracy = [mean(runs), Math.min(...runs), Math.max(...runs)];
  return out;
}

export function choose(state, key, value) {
  if (!(key in state)) throw new Error(`no field ${key}`);
  return {...state, [key]: value};
}
