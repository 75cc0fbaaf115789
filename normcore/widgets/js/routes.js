// Chapter 3's explorer, one view for JupyterLab and the static site (anywidget): choose a block
// and an upstream gradient; see the input gradient collected by the three routes, the oracle's
// and the naive one, computed in the page (routes-model.js).

import * as rm from "./routes-model.js";
import {matrixTable, computingView, figure} from "./view.js";

/** A block's table, in a box of its own. */
function table(values, title, key) {
  return `<div class="nc-matrix">${matrixTable(values, title, key)}</div>`;
}

function sums(values, key) {
  return values.map((v, j) => {
    const shown = Math.abs(v) < 5e-5 ? 0 : v;
    return `<span data-key="${key}:${j}" data-value="${v}">${shown.toFixed(4)}</span>`;
  }).join(", ");
}

export function readout(state, f) {
  return table(f.true, "collected (three routes)", "collected") +
    table(f.oracle, "oracle (finite difference)", "oracle") +
    table(f.naive, "naive d / s", "naive") +
    "<ul>" +
    "<li>collected gradient's largest gap to the oracle: " +
    `${figure("true_gap", f.true_gap, f.true_gap.toExponential(2))} (the oracle's own rounding)` +
    "</li><li>naive gradient's largest error: " +
    `${figure("naive_error", f.naive_error, f.naive_error.toFixed(4))} (largest true gradient ` +
    `${figure("largest_true", f.largest_true, f.largest_true.toFixed(4))})</li>` +
    `<li>naive cells with the wrong sign: ${figure("wrong_sign", f.wrong_sign, f.wrong_sign)} ` +
    `of ${figure("cells", f.cells, f.cells)}</li>` +
    `<li>column sums, collected: ${sums(f.true_sums, "true_sums")}; naive: ` +
    `${sums(f.naive_sums, "naive_sums")}</li></ul>`;
}

function render({model, el}) {
  return computingView({
    model, el, classes: "nc-routes normcore-routes", readout,
    figures: rm.figures,
    kept: "The figures below are for the last input x that could be used.",
    build(form) {
      form.menu("source", "input x", [["the worked four", "worked"],
        ["a random input", "random"], ["my own input", "typed"]]);
      form.box("rows", "rows");
      form.box("columns", "columns");
      form.box("seed", "seed");
      form.box("typed", "my input x", {rows: 4});
      form.menu("grad", "upstream gradient", [["1, 2, 3, ... across the input", "counting"],
        ["all ones", "ones"], ["random (seeded)", "random"], ["my own gradient", "typed"]]);
      form.box("typed_grad", "my gradient", {rows: 4});
      form.hint("Type, then press Enter (or click elsewhere in a box of several lines): the " +
        "figures follow.");
    },
  });
}

export default {render};
