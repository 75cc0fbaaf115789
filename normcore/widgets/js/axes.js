// Chapter 4's explorer, one view for JupyterLab and the static site (anywidget): pick the data
// and the axis the statistics run along; see the statistics' shape, the output and the slope
// check, computed in the page (axes-model.js).

import * as am from "./axes-model.js";
import {friendly} from "./input.js";
import {ask, element, escape, showWhere} from "./page.js";

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
  const item = (key, value, text) => `<b data-key="${key}" data-value="${value}">${text}</b>`;
  const head = f.output[0].map((_, j) => `<th scope="col">unit ${j + 1}</th>`).join("");
  const body = f.output.map((row, i) => `<tr><th scope="row">row ${i + 1}</th>` +
    row.map((v, j) => `<td data-key="output:${i},${j}" data-value="${v}">${v.toFixed(4)}</td>`)
      .join("") + "</tr>").join("");
  const title = state.data === "block" ? "output" : "output, image 1, channel 1";
  const rank = state.data === "block" ? 2 : 4;
  const shape = `(${f.statistics_shape.join(", ")}${f.statistics_shape.length === 1 ? "," : ""})`;
  const sums = f.centred
    ? "the passed-down block sums to zero over each statistic's cells: largest sum " +
      item("largest_sum", f.largest_sum, f.largest_sum.toExponential(1))
    : "no centring, so the passed-down block need not sum to zero: largest sum " +
      item("largest_sum", f.largest_sum, f.largest_sum.toFixed(4));
  return `<table class="nc-table"><caption>${title}</caption><thead><tr><td></td>${head}</tr>` +
    `</thead><tbody>${body}</tbody></table><ul>` +
    `<li>${NAMES[state.axis]}: statistics ${ALONG[`${rank},${state.axis}`]}</li>` +
    `<li>statistics' shape <b data-key="statistics_shape" data-value="${f.statistics_shape}">` +
    `${shape}</b>, ${item("count", f.count, f.count)} values each</li>` +
    "<li>passed-down block against the oracle: largest gap " +
    `${item("true_gap", f.true_gap, f.true_gap.toExponential(1))} (largest slope ` +
    `${item("largest_true", f.largest_true, f.largest_true.toFixed(4))})</li>` +
    `<li>${sums}</li></ul>`;
}

function render({model, el}) {
  const root = element("div", {class: "nc-axes normcore-axes"});
  const where = element("p", {class: "nc-where"});
  const controls = element("div", {class: "nc-form"});
  const message = element("div", {class: "nc-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  root.append(where, controls, message, out);
  el.append(root);
  const set = (key, value) => {
    model.set("state", {...model.get("state"), [key]: value});
    model.save_changes();
  };
  const fields = {};
  function select(key, label, options) {
    const line = element("label", {class: "nc-field"});
    const input = element("select", {"data-key": key});
    for (const [text, value] of options) input.append(element("option", {value}, text));
    input.addEventListener("change", () => set(key, input.value));
    line.append(element("span", {class: "nc-label"}, label), input);
    fields[key] = input;
    return line;
  }
  const groupsLine = element("label", {class: "nc-field"});
  const groupsBox = element("input", {type: "text", "data-key": "groups", size: "4"});
  const commit = () => {
    if (groupsBox.value !== model.get("state").groups) set("groups", groupsBox.value);
  };
  groupsBox.addEventListener("change", commit);
  groupsBox.addEventListener("keydown", (e) => { if (e.key === "Enter") commit(); });
  groupsLine.append(element("span", {class: "nc-label"}, "groups"), groupsBox);
  fields.groups = groupsBox;
  controls.append(
    select("data", "data", [["a block of 4 rows, 3 features", "block"],
      ["2 images, 4 channels, 3 x 3", "images"]]),
    select("axis", "normaliser", Object.entries(NAMES).map(([k, v]) => [v, k])),
    groupsLine,
    element("p", {class: "nc-hint"}, "Instance and group norm need the image batch; groups " +
      "must divide its 4 channels. Type a group count, then press Enter."));

  function update() {
    const s = model.get("state");
    for (const [key, input] of Object.entries(fields)) {
      if (document.activeElement !== input) input.value = s[key];
    }
    let f;
    try {
      f = am.figures(s, model.get("data"));
    } catch (error) {
      if (!(error instanceof am.InputError)) throw error;
      message.innerHTML = `<span class="nc-error">${escape(friendly(error.message))} The ` +
        "figures below are for the last choice that could be computed.</span>";
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = readout(s, f);
    showWhere(where, model, token, f);
  }
  model.on("change:state", update);
  model.on("change:kernel", update);
  const token = ask(model);
  update();
  return () => {
    model.off("change:state", update);
    model.off("change:kernel", update);
  };
}

export default {render};
