// Chapter 6's widget as data: the JavaScript twin of normcore/widgets/comparison_model.py.
// The results are the chapter's per-seed figures (every arrangement, every seed); the table
// averages them over the seeds ticked: the mean added in seed order and divided by the count,
// and the lowest and highest held-out accuracy.

// InputError: a choice that leaves nothing to show; the sentence says why.
import {InputError} from "./input.js";

export const FIELDS = ["train_accuracy", "held_accuracy", "train_loss", "held_loss"];

function mean(values) {
  let total = 0;
  for (const v of values) total += v;
  return total / values.length;
}

/** The table for the arrangements and seeds ticked (as comparison_model.figures). */
export function figures(state, results) {
  const {order, seeds} = results;
  const chosen = order.filter((k) => state.arrangements.includes(k));
  const ticked = seeds.filter((s) => state.seeds.includes(s));
  const unknown = state.arrangements.filter((k) => !order.includes(k))
    .concat(state.seeds.filter((s) => !seeds.includes(s)).map(String));
  if (unknown.length) throw new InputError(`the chapter has no runs for ${unknown.join(", ")}`);
  if (!chosen.length) {
    throw new InputError("tick at least one arrangement to see its row of the table");
  }
  if (!ticked.length) {
    throw new InputError("tick at least one seed: every figure is a mean over the seeds ticked");
  }
  const at = ticked.map((s) => seeds.indexOf(s));
  const out = {arrangements: chosen, seeds: ticked.length};
  for (const field of FIELDS) {
    out[field] = chosen.map((k) => mean(at.map((i) => results.figures[k][field][i])));
  }
  const held = chosen.map((k) => at.map((i) => results.figures[k].held_accuracy[i]));
  out.held_low = held.map((v) => Math.min(...v));
  out.held_high = held.map((v) => Math.max(...v));
  return out;
}

export function toggleArrangement(state, key, on) {
  const rest = state.arrangements.filter((k) => k !== key);
  return {...state, arrangements: on ? rest.concat([key]) : rest};
}

export function toggleSeed(state, seed, on) {
  const rest = state.seeds.filter((s) => s !== seed);
  return {...state, seeds: on ? rest.concat([seed]).sort((a, b) => a - b) : rest};
}
