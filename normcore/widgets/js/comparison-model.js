// Chapter 6's widget as data: the page's arithmetic and the reader's actions
// (normcore/widgets/comparison_model.py is normcore's answer for a state, the tests' oracle).
// The results are the chapter's per-seed figures (every arrangement, every seed); the table
// averages them over the seeds ticked: the mean added in seed order and divided by the count,
// and the lowest and highest held-out accuracy. The second table pairs each arrangement with
// the plain network person by person over the seeds ticked, with the chapter's bootstrap draws
// over people.

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
  out.paired = chosen.filter((k) => k !== REFERENCE && order.includes(REFERENCE));
  const rows = out.paired.map((k) => paired(results, k, at));
  for (const name of ["gap", "people_low", "people_high", "seed_low", "seed_high", "worse",
    "better"]) {
    out[`paired_${name}`] = rows.map((row) => row[name]);
  }
  return out;
}

/** The arrangement every other is paired with (comparison_model.REFERENCE). */
export const REFERENCE = "none";

/** numpy's percentile (linear): the `q` per cent point of `sorted` (ascending). */
export function percentile(sorted, q) {
  const h = (sorted.length - 1) * (q / 100);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const t = h - lo;
  const [a, b] = [sorted[lo], sorted[hi]];
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;   // as numpy's _lerp
}

/** `key` against the plain network person by person over the seeds at indices `at` (as
 * comparison_model.paired): counts stay whole numbers until the last division. */
export function paired(results, key, at) {
  const bits = (k) => at.map((i) => Array.from(results.held_correct[k][i], (c) => Number(c)));
  const a = bits(key);
  const r = bits(REFERENCE);
  const seeds = a.length;
  const people = results.people;
  const counts = Array.from({length: people}, (_, p) =>
    a.reduce((sum, row) => sum + row[p], 0) - r.reduce((sum, row) => sum + row[p], 0));
  const draws = results.draws;
  const sums = [];
  for (let start = 0; start < draws.length; start += people) {
    let total = 0;
    for (let j = 0; j < people; j++) total += counts[draws.charCodeAt(start + j) - 97];
    sums.push(total);
  }
  const means = sums.sort((x, y) => x - y).map((v) => v / (seeds * people));
  const perSeed = a.map((row, s) =>
    (row.reduce((x, y) => x + y, 0) - r[s].reduce((x, y) => x + y, 0)) / people);
  const gap = counts.reduce((x, y) => x + y, 0) / (seeds * people);
  let error = 0;
  let t = 0;
  if (seeds > 1) {
    const known = results.t975[String(seeds - 1)];
    t = known === undefined ? 1.96 : known;
    const m = perSeed.reduce((x, y) => x + y, 0) / seeds;
    const squares = perSeed.reduce((x, v) => x + (v - m) ** 2, 0);
    error = Math.sqrt(squares / (seeds - 1)) / Math.sqrt(seeds);
  }
  return {
    gap, people_low: percentile(means, results.interval[0]),
    people_high: percentile(means, results.interval[1]),
    seed_low: gap - t * error, seed_high: gap + t * error,
    worse: counts.filter((c) => c < 0).length, better: counts.filter((c) => c > 0).length,
  };
}

export function toggleArrangement(state, key, on) {
  const rest = state.arrangements.filter((k) => k !== key);
  return {...state, arrangements: on ? rest.concat([key]) : rest};
}

export function toggleSeed(state, seed, on) {
  const rest = state.seeds.filter((s) => s !== seed);
  return {...state, seeds: on ? rest.concat([seed]).sort((a, b) => a - b) : rest};
}
