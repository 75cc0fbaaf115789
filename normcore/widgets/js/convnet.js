// Chapter 10's widget, one view for JupyterLab and the static site (anywidget): choose the
// normaliser after the convolutions, the images a device holds and group norm's group count;
// see how many values each statistic pools, how far one device's statistics stray, and the
// accuracy the chapter's runs reached, computed in the page (convnet-model.js).

import * as cm from "./convnet-model.js";
import {computingView, figure} from "./view.js";

const NAMES = {batch: "batch norm (per channel)", layer: "layer norm",
  instance: "instance norm", group: "group norm"};

const cell = (key, value, text) => `<td data-key="${key}" data-value="${value}">${text}</td>`;
const row = (name, ...cells) => `<tr><th scope="row">${name}</th>${cells.join("")}</tr>`;

/** The readout's HTML for the figures `f` of `state`; `c` is the case (its runs' sizes). */
export function readout(state, f, c) {
  const rows = [
    row("values each statistic pools, after the first convolution (8 × 8 pixels)",
      cell("pooled:0", f.pooled[0], f.pooled[0])),
    row("values each statistic pools, after the second convolution (4 × 4 pixels)",
      cell("pooled:1", f.pooled[1], f.pooled[1])),
    row("means one device reads after the first convolution",
      cell("statistics", f.statistics, f.statistics)),
  ];
  if (f.ratio_mean !== undefined) {
    rows.push(
      row(`devices the ${cm.IMAGES} sample images fill`,
        cell("devices", f.devices, f.devices)),
      row("a device's variance of a channel over the sample's: mean",
        cell("ratio_mean", f.ratio_mean, f.ratio_mean.toFixed(3))),
      row("the same ratio's spread from device to device",
        cell("ratio_spread", f.ratio_spread, f.ratio_spread.toFixed(3))));
  }
  if (f.accuracy !== undefined) {
    const [m, lo, hi] = f.accuracy;
    rows.push(row("held-out accuracy in the chapter's runs: mean of the seeds",
      cell("accuracy:0", m, m.toFixed(3))),
    row("the seeds' range", `<td>${figure("accuracy:1", lo, lo.toFixed(3))} to ` +
      `${figure("accuracy:2", hi, hi.toFixed(3))}</td>`));
  }
  const notes = [];
  if (f.ratio_mean === undefined) {
    const name = NAMES[state.normaliser];
    notes.push(`${name[0].toUpperCase()}${name.slice(1)} reads each image alone: its ` +
      "statistics are the same whoever shares the device, so nothing strays from device to " +
      "device.");
  }
  if (f.accuracy === undefined) {
    const sizes = Object.keys(c.accuracy.batch).map(Number).sort((a, b) => a - b);
    const listed = `${sizes.slice(0, -1).join(", ")} and ${sizes[sizes.length - 1]}`;
    notes.push(state.normaliser === "batch"
      ? `The chapter trained batch norm at ${listed} images a device only: no accuracy ` +
        "for this size."
      : `The chapter trained group norm with ${c.groups} groups only: no accuracy for this ` +
        "count.");
  }
  return '<table class="nc-table"><caption>What each statistic is read from</caption>' +
    `<tbody>${rows.join("")}</tbody></table>` +
    notes.map((n) => `<p class="nc-note">${n}</p>`).join("");
}

function render({model, el}) {
  return computingView({
    model, el, classes: "nc-convnet normcore-convnet",
    readout: (s, f) => readout(s, f, model.get("case")),
    figures: (s) => cm.figures(s, model.get("case")),
    kept: "The figures below are for the last choice that could be computed.",
    build(form) {
      form.menu("normaliser", "normaliser", Object.entries(NAMES).map(([k, v]) => [v, k]));
      form.box("per_device", "images a device holds", {size: "4"});
      form.box("groups", "groups (group norm)", {size: "4"});
      form.hint("Type a whole number (images: 1 to 64; groups: 1, 2, 4 or 8), then press " +
        "Enter or click elsewhere.");
    },
  });
}

export default {render};
