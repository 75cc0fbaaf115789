// Chapter 4's explorer, one view for JupyterLab and the static site (anywidget): pick the data
// and the axis the statistics run along; see the statistics' shape, the output and the gradient
// check, computed in the page (axes-model.js).

import * as am from "./axes-model.js";
import {matrixTable, computingView, figure} from "./view.js";

const NAMES = {batch: "batch norm", layer: "layer norm", rms: "RMS norm",
  instance: "instance norm", group: "group norm"};
const ALONG = {
  "2,batch": "down the rows, one figure per feature",
  "2,layer": "along the row, one figure per row",
  "2,rms": "along the row, one figure per row (no centring)",
  "4,batch": "over (N, H, W), one figure per channel",
  "4,layer": "over (C, H, W), one figure per image",
  "4,rms": "over (C, H, W), one figure per image (no centring)",
  "4,instance": "over (H, W), one figure per image and channel",
  "4,group": "over (channels in the group, H, W), one figure per image and group",
};

export function readout(state, f) {
  const title = state.data === "rows" ? "output" : "output, image 1, channel 1";
  const rank = state.data === "rows" ? 2 : 4;
  const shape = `(${f.statistics_shape.join(", ")}${f.statistics_shape.length === 1 ? "," : ""})`;
  const sums = f.centred
    ? "the input gradient sums to zero over each statistic's cells: largest sum " +
      figure("largest_sum", f.largest_sum, f.largest_sum.toExponential(1))
    : "no centring, so the input gradient need not sum to zero: largest sum " +
      figure("largest_sum", f.largest_sum, f.largest_sum.toFixed(4));
  return matrixTable(f.output, title, "output") + "<ul>" +
    `<li>${NAMES[state.axis]}: statistics ${ALONG[`${rank},${state.axis}`]}</li>` +
    `<li>statistics' shape ${figure("statistics_shape", f.statistics_shape, shape)}, ` +
    `${figure("count", f.count, f.count)} values each</li>` +
    "<li>input gradient against the oracle: largest gap " +
    `${figure("true_gap", f.true_gap, f.true_gap.toExponential(1))} (largest gradient ` +
    `${figure("largest_true", f.largest_true, f.largest_true.toFixed(4))})</li>` +
    `<li>${sums}</li></ul>`;
}

function render({model, el}) {
  return computingView({
    model, el, classes: "nc-axes normcore-axes", readout,
    figures: (state) => am.figures(state, model.get("data")),
    kept: "The figures below are for the last choice that could be computed.",
    build(form) {
      form.menu("data", "data", [["an input of 4 rows, 3 features", "rows"],
        ["2 images, 4 channels, 3 x 3", "images"]]);
      form.menu("axis", "normaliser", Object.entries(NAMES).map(([k, v]) => [v, k]));
      form.box("groups", "groups", {size: "4"});
      form.hint("Instance and group norm need the image batch; groups must divide its 4 " +
        "channels. Type a group count, then press Enter.");
    },
  });
}

export default {render};
