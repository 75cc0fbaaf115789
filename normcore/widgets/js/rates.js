// Chapter 7's widget, one view for JupyterLab and the static site (anywidget): the rate bracket
// on the chapter's fine grid under a loss limit the reader types, and the batch layer asked with
// batch statistics over the chapter's random orders of the test rows. Every run was trained
// when the chapter ran (rates_model.results_data); the page recomputes the bracket and the
// spread for each choice (rates-model.js), so no kernel is needed.

import * as rm from "./rates-model.js";
import {InputError, friendly} from "./input.js";
import {element, escape, showWhere} from "./page.js";
import {Form, follow} from "./view.js";

const NAMES = {plain: "plain", normalised: "with the batch layer"};

/** A figure keyed for the tests (full value in data-value), shown as `text`. */
const shown = (key, value, text) =>
  `<b data-key="${key}" data-value="${value === null ? "" : value}">${escape(text)}</b>`;
const four = (v) => v.toFixed(4);

export function bracketTable(results, f) {
  return rm.FAMILIES.map((family) => {
    const grid = results.families[family];
    const rows = grid.rates.map((rate, i) => {
      const cells = grid.losses[i].map((v) => (v === null ? "refused"
        : grid.chaotic[i] ? "chaotic" : four(v)));
      const stable = f[`${family}_stable`][i];
      return `<tr><th scope="row">${escape(rate)}</th>` +
        cells.map((c) => `<td>${c}</td>`).join("") +
        `<td data-key="${family}:stable:${rate}" data-value="${stable}">` +
        `${stable ? "stable" : "not"}</td></tr>`;
    }).join("");
    const last = f[`${family}_last`];
    const first = f[`${family}_first`];
    const verdict = last === null ? "no rate of the grid is stable"
      : first === null ? `every rate of the grid is stable, up to ${last}`
        : `stable through ${last}, not at ${first}`;
    return `<table class="nc-table"><caption>${NAMES[family]}: ` +
      `${shown(`${family}:bracket`, `${last}|${first}`, verdict)}</caption>` +
      '<thead><tr><th scope="col">learning rate</th><th scope="col">run 1 final loss</th>' +
      '<th scope="col">run 2 final loss</th><th scope="col">both under the limit</th></tr>' +
      `</thead><tbody>${rows}</tbody></table>`;
  }).join("");
}

export function factorLine(f) {
  if (f.factor === null) {
    return "<p>With a family that has no stable rate, there is no factor to give.</p>";
  }
  const range = f.factor_low === null || f.factor_high === null ? ""
    : `; on this grid the true factor lies between ${shown("factor_low", f.factor_low,
      f.factor_low.toFixed(1))} and ${shown("factor_high", f.factor_high,
      f.factor_high.toFixed(1))}`;
  return `<p>The batch layer allows a rate about ${shown("factor", f.factor,
    f.factor.toFixed(1))} times larger${range}.</p>`;
}

export function ordersReadout(state, f, asked) {
  const line = (label, key, text) => `<tr><th scope="row">${label}</th>` +
    `<td data-key="${key}" data-value="${f[key]}">${text}</td></tr>`;
  return `<table class="nc-table"><caption>run ${state.run}, rate ${asked.rate}, ` +
    `batches of ${asked.batch}: ` +
    `test accuracy</caption><tbody>` +
    line("by the running statistics", "running", four(f.running)) +
    line("batch statistics, rows in their stored order", "in_order", four(f.in_order)) +
    line(`batch statistics, mean over ${state.orders} random orders`, "mean", four(f.mean)) +
    line("their standard deviation", "sd", four(f.sd)) +
    line("lowest order", "lowest", four(f.lowest)) +
    line("highest order", "highest", four(f.highest)) +
    line("orders scoring below the stored order (per cent)", "percentile",
      f.percentile.toFixed(0)) +
    line("batches sorted by label, ones last", "sorted_last", four(f.sorted_last)) +
    line("batches sorted by label, ones first", "sorted_first", four(f.sorted_first)) +
    "</tbody></table>";
}

function render({model, el}) {
  const results = model.get("results");
  const root = element("div", {class: "nc-rates normcore-rates"});
  const where = element("p", {class: "nc-where"});
  const form = new Form(model);
  const message = element("div", {class: "nc-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  root.append(where, form.node, message, out);
  el.append(root);
  // The keys a reader presses here are the widget's: JupyterLab's notebook would otherwise take
  // them as its own shortcuts (an arrow key would move between cells, not along the slider).
  root.addEventListener("keydown", (event) => event.stopPropagation());

  form.box("limit", "loss limit", {size: "8",
    commit: (text) => form.act(rm.setLimit(model.get("state"), text))});
  const runs = element("div", {class: "nc-toggle", role: "group", "aria-label": "run"});
  runs.append(element("span", {class: "nc-label"}, "run"));
  for (const run of [1, 2]) {
    const button = element("button", {type: "button", "data-value": String(run)}, `run ${run}`);
    button.addEventListener("click", () => form.act(rm.setRun(model.get("state"), run)));
    runs.append(button);
  }
  const offered = results.offered;
  const ordersField = element("label", {class: "nc-field"});
  const slider = element("input", {type: "range", min: "0", max: String(offered.length - 1),
    step: "1", "aria-label": "random orders", "data-key": "orders"});
  const count = element("output", {class: "nc-value"});
  slider.addEventListener("input", () =>
    form.act(rm.setOrders(model.get("state"), offered[Number(slider.value)])));
  ordersField.append(element("span", {class: "nc-label"}, "random orders"), slider, count);
  form.node.append(runs, ordersField);
  form.hint("A run is stable when both of its seeds end under the loss limit (the chapter's " +
    `is ${results.asked.limit}). The orders are the chapter's own random orders of the test ` +
    "rows.");

  const runsShown = () => runs.querySelectorAll("button").forEach((b) => {
    b.setAttribute("aria-pressed", String(Number(b.dataset.value) === model.get("state").run));
  });
  return follow(model, (token) => {
    const state = model.get("state");
    form.show();
    runsShown();
    slider.value = String(Math.max(offered.indexOf(state.orders), 0));
    slider.setAttribute("aria-valuetext", `${state.orders} orders`);
    count.textContent = String(state.orders);
    let f;
    try {
      f = rm.figures(state, results);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      message.innerHTML = `<span class="nc-error" data-error="${escape(error.message)}">` +
        `${escape(friendly(error.message))} The figures below are for the last limit that ` +
        "could be used.</span>";
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = '<p class="nc-head"><b>How much larger a rate</b></p>' +
      bracketTable(results, f) + factorLine(f) +
      '<p class="nc-head"><b>Asking with batch statistics</b></p>' +
      ordersReadout(state, f, results.asked);
    showWhere(where, model, token, f,
      "Runs in this page: every run was trained when the chapter ran; your browser works " +
        "out the bracket and the spread over orders for each choice, no kernel needed.");
  });
}

export default {render};
