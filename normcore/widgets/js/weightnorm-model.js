// Chapter 5's widget as data: the JavaScript twin of normcore/widgets/weightnorm_model.py.
// One step of a weight-normalised dense layer and of a plain dense layer holding the same
// effective weights, from the same gradient (normcore/dense.py, normcore/experiments/weightnorm.py):
// three neurons read five people through tanh; the tanh answers summed are each person's logit,
// scored by binary cross-entropy (summed over the people).

import {InputError, readNumber} from "./input.js";
import {CONFIG} from "./config.js";

const LIMIT = CONFIG.weightnorm.LIMIT;   // Python's weightnorm_model.LIMIT

/** The lengths and learning rate typed (as weightnorm_model.parse). */
export function parse(state) {
  const lengths = state.lengths.map((t, i) => readNumber(t, `length ${i + 1}`, LIMIT));
  lengths.forEach((v, i) => {
    if (v === 0) {
      throw new InputError(`length ${i + 1} is 0: a direction of length 0 has no unit vector ` +
        "to point along");
    }
  });
  return [lengths, readNumber(state.learning_rate, "learning rate", LIMIT)];
}

const matmul = (a, b) => a.map((row) => b[0].map((_, j) =>
  row.reduce((sum, v, k) => sum + v * b[k][j], 0)));
const transpose = (a) => a[0].map((_, j) => a.map((row) => row[j]));

/** Each column's length, scaled by its largest entry first (normcore.dense.direction_length). */
export function directionLength(w) {
  return w[0].map((_, j) => {
    const largest = Math.max(...w.map((row) => Math.abs(row[j])));
    const safe = largest > 0 ? largest : 1;
    return largest * Math.sqrt(w.reduce((sum, row) => sum + (row[j] / safe) ** 2, 0));
  });
}

/** The upstream gradient at the layer's output for weights `w` (through tanh and the loss). */
function arriving(x, y, w, bias) {
  const out = matmul(x, w).map((row) => row.map((v, j) => v + bias[j]));
  const t = out.map((row) => row.map(Math.tanh));
  const count = y.length;
  const d = t.map((row, i) => {
    const z = row.reduce((sum, v) => sum + v, 0);       // the person's logit
    const e = Math.exp(-Math.abs(z));
    const chance = z >= 0 ? 1 / (1 + e) : e / (1 + e);  // sigmoid(z), as normcore.loss makes it
    const grad = ((chance - y[i]) / count) * count;    // the summed loss's gradient
    return row.map((v) => grad * (1 - v * v));          // back through tanh
  });
  return d;
}

/** Effective weights after one step of each layer, and the four figures the widget shows. */
export function figures(state, c) {
  const [lengths, rate] = parse(state);
  const direction = c.unit.map((row) => row.map((v, j) => v * lengths[j]));
  const magnitude = directionLength(direction);
  const unit = direction.map((row) => row.map((v, j) => v / magnitude[j]));
  const effective = unit.map((row) => row.map((v, j) => magnitude[j] * v));
  const x = c.x;

  // dense: weights minus the learning rate times x^T d
  const dDense = arriving(x, c.y, effective, c.bias);
  const gradDense = matmul(transpose(x), dDense);
  const dense = effective.map((row, k) => row.map((v, j) => v - rate * gradDense[k][j]));

  // weight norm: the dense gradient split into its part along the direction (the magnitude's
  // gradient) and the rest, scaled by magnitude / length (the direction's, projected)
  const d = arriving(x, c.y, effective, c.bias);
  const ws = matmul(transpose(x), d);
  const length = directionLength(direction);
  const along = ws[0].map((_, j) => ws.reduce((sum, row, k) => sum + row[j] * unit[k][j], 0));
  const gradV = ws.map((row, k) => row.map((v, j) =>
    (magnitude[j] / length[j]) * (v - along[j] * unit[k][j])));
  const movedV = direction.map((row, k) => row.map((v, j) => v - rate * gradV[k][j]));
  const movedG = magnitude.map((g, j) => g - rate * along[j]);
  const movedLength = directionLength(movedV);
  const weightnorm = movedV.map((row) => row.map((v, j) => movedG[j] * (v / movedLength[j])));

  const distance = Math.sqrt(weightnorm.flat().reduce((sum, v, k) =>
    sum + (v - dense.flat()[k]) ** 2, 0));
  return {before: directionLength(effective), weightnorm: directionLength(weightnorm),
    dense: directionLength(dense), distance};
}

export function setLength(state, i, text) {
  const lengths = state.lengths.slice();
  lengths[i] = text;
  return {...state, lengths};
}

export function setLearningRate(state, text) {
  return {...state, learning_rate: text};
}
