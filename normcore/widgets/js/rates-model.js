// Chapter 7's widget as data: the reader's actions and the page's arithmetic for a state
// {limit, run, orders} (normcore/widgets/rates_model.py is normcore's answer for a state, the
// oracle the tests hold this file to). The results are the chapter's runs: final losses on each
// family's grid of rates, and, for each run, counts of test subscribers right under each random
// order of the rows, in the stored order, by the running statistics and with label-sorted batches.

import {InputError, readNumber} from "./input.js";
import {CONFIG} from "./config.js";

/** The largest loss limit the box takes (Python's rates_model.LIMIT). */
const LIMIT = CONFIG.rates.LIMIT;
export const FAMILIES = ["plain", "normalised"];

/** The loss limit typed; an InputError unless it is a number above 0. */
export function limit(state) {
  const value = readNumber(state.limit, "loss limit", LIMIT);
  if (value <= 0) {
    throw new InputError("loss limit: expected a number above 0, a loss no run can end under");
  }
  return value;
}

function bracket(family, bound) {
  const stable = family.losses.map((losses) => losses.every((v) => v !== null && v < bound));
  const firstBad = stable.includes(false) ? stable.indexOf(false) : stable.length;
  const last = firstBad > 0 ? family.rates[firstBad - 1] : null;
  const first = firstBad < stable.length ? family.rates[firstBad] : null;
  return [stable, last, first];
}

const ratio = (a, b) => (a !== null && b !== null ? Number(a) / Number(b) : null);

/** The figures for a state, under the keys rates_model.figures uses. */
export function figures(state, results) {
  const bound = limit(state);
  const out = {};
  for (const family of FAMILIES) {
    const [stable, last, first] = bracket(results.families[family], bound);
    out[`${family}_stable`] = stable;
    out[`${family}_last`] = last;
    out[`${family}_first`] = first;
  }
  out.factor = ratio(out.normalised_last, out.plain_last);
  out.factor_low = ratio(out.normalised_last, out.plain_first);
  out.factor_high = ratio(out.normalised_first, out.plain_last);
  const run = results.orders[`run ${state.run}`];
  const n = results.rows;
  const right = run.right.slice(0, state.orders);
  const k = right.length;
  const total = right.reduce((sum, c) => sum + c, 0);   // whole numbers: exact
  const mean = total / n / k;
  const accuracies = right.map((c) => c / n);
  const squares = accuracies.reduce((sum, a) => sum + (a - mean) ** 2, 0);
  const inOrder = run.in_order / n;
  const below = right.filter((c) => c < run.in_order).length;
  const ties = right.filter((c) => c === run.in_order).length;
  return Object.assign(out, {
    running: run.running / n,
    in_order: inOrder,
    mean,
    sd: Math.sqrt(squares / (k - 1)),
    lowest: Math.min(...right) / n,
    highest: Math.max(...right) / n,
    percentile: 100 * (below / k + ties / k / 2),
    sorted_last: run.sorted["label, ones last"] / n,
    sorted_first: run.sorted["label, ones first"] / n,
  });
}

// ------------------------------------------------------------------------------------ actions
/** Type a loss limit (kept as typed; figures() says what is wrong with it). */
export function setLimit(state, text) {
  return {...state, limit: String(text)};
}

/** Ask run 1 or 2. */
export function setRun(state, run) {
  return {...state, run: Number(run)};
}

/** Count the first `orders` random orders (one of results.offered). */
export function setOrders(state, orders) {
  return {...state, orders: Number(orders)};
}
