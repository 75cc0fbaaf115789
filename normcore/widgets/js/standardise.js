// normcore's standardising routine in JavaScript, for the widgets on the static site.
//
// This file mirrors normcore/standardise.py line for line, for the 2-D blocks the widgets show
// (a block is an array of rows, each an array of numbers). The browser tests hold every figure it
// gives to normcore's own answer, computed in Python, to 1e-12 relative.
//
// Conventions (as in standardise.py):
// * axis 0 reads down the rows (one statistic per feature: batch norm); axis 1 reads along each
//   row (one statistic per row: layer norm, RMS norm);
// * statistics keep the reduced axis with size 1, like numpy's keepdims: down the rows the mean
//   is [[m1, m2, ...]], along the rows [[m1], [m2], ...]; `at(stat, i, j)` broadcasts them;
// * the variance is the biased one (divide by the count); epsilon sits under the square root;
// * without centring (RMS) the mean is null and the "variance" is the mean square.

/** A statistic (kept axis of size 1) read at row i, column j, as numpy broadcasting would. */
export function at(stat, i, j) {
  return stat[stat.length === 1 ? 0 : i][stat[0].length === 1 ? 0 : j];
}

/** Apply f(value, i, j) to every cell of a block. */
export function map(x, f) {
  return x.map((row, i) => row.map((v, j) => f(v, i, j)));
}

/** How many values each statistic along `axis` reads. */
function countAlong(x, axis) {
  return axis === 0 ? x.length : x[0].length;
}

/** The sum along `axis`, keeping it, added in numpy's order (first to last). */
function sumAlong(x, axis) {
  if (axis === 0) {
    const sums = x[0].map(() => 0);
    for (const row of x) row.forEach((v, j) => { sums[j] += v; });
    return [sums];
  }
  return x.map((row) => [row.reduce((sum, v) => sum + v, 0)]);
}

/** The mean along `axis`, keeping it: the sum over the count, as ndarray.mean does. */
function meanAlong(x, axis) {
  const n = countAlong(x, axis);
  return map(sumAlong(x, axis), (sum) => sum / n);
}

/**
 * Standardise `x` by its own statistics along `axis` (biased variance, epsilon under the root).
 * The caller has checked `x` (finite numbers, at least one row) and `eps` (> 0).
 * Returns {z, mean, variance, deviation, axis, count, fromInput: true}.
 */
export function standardise(x, axis, eps, centre = true) {
  let mean = null;
  let centred = x;
  if (centre) {
    mean = meanAlong(x, axis);
    centred = map(x, (v, i, j) => v - at(mean, i, j));
  }
  const variance = meanAlong(map(centred, (c) => c * c), axis);
  const divisor = map(variance, (v) => Math.sqrt(v + eps));
  return {
    z: map(centred, (c, i, j) => c / at(divisor, i, j)),
    mean,
    variance,
    divisor,
    axis,
    count: countAlong(x, axis),
    fromInput: true,
  };
}

/** Standardise `x` by statistics handed in (e.g. a layer's running statistics): constants. */
export function standardiseBy(x, mean, divisor, axis) {
  const centred = mean === null ? x : map(x, (v, i, j) => v - at(mean, i, j));
  return {
    z: map(centred, (c, i, j) => c / at(divisor, i, j)),
    mean,
    variance: null,
    divisor,
    axis,
    count: countAlong(x, axis),
    fromInput: false,
  };
}

/**
 * The input gradient to the block, given the gradient `d` arriving at the standardised block:
 *     grad_input = (n d - sum(d) - z sum(d z)) / (n s)      (without centring: no sum(d))
 * Statistics handed in are constants: then it is d / s.
 */
export function standardiseBackward(st, d) {
  if (!st.fromInput) return map(d, (v, i, j) => v / at(st.divisor, i, j));
  const n = st.count;
  const sumDz = sumAlong(map(d, (v, i, j) => v * st.z[i][j]), st.axis);
  let total = map(d, (v, i, j) => n * v - st.z[i][j] * at(sumDz, i, j));
  if (st.mean !== null) {
    const sumD = sumAlong(d, st.axis);
    total = map(total, (t, i, j) => t - at(sumD, i, j));
  }
  return map(total, (t, i, j) => t / (n * at(st.divisor, i, j)));
}

/** The tempting wrong answer, d / deviation, that ignores the routes through the statistics. */
export function naiveBackward(st, d) {
  return map(d, (v, i, j) => v / at(st.divisor, i, j));
}

/**
 * The running-figure step of a batch layer (BatchNorm.step, normcore/batch.py):
 *     running = momentum * running + (1 - momentum) * batch
 * for one array of figures (one per feature), with the batch's biased variance.
 */
export function foldIn(running, batch, momentum) {
  return running.map((r, j) => momentum * r + (1 - momentum) * batch[j]);
}

/** Scale and shift a standardised block: z * scale + shift, one scale and shift per feature. */
export function affine(z, scale, shift) {
  return map(z, (v, i, j) => v * scale[j] + shift[j]);
}
