// Chapter 1's switch, one view for JupyterLab and the static site (anywidget): both networks'
// charts and figures were computed when the chapter ran; the page shows the one chosen.

import {element, showWhere} from "./page.js";
import {follow} from "./view.js";

export function readout(f) {
  const item = (key) => `<b data-key="${key}">${f[key]}</b>`;
  const lines = [
    `largest drift of a unit's mean, first epoch to last: ${item("largest_shift")} (unit ${item("shift_unit")})`,
    `largest single-epoch move: ${item("largest_move")} (unit ${item("move_unit")}, epoch ` +
      `${item("move_epoch")})`,
  ];
  if (f.shift_gap !== null) {
    // a rounding-level gap: Python sends the power of ten at or above it (normcore.book.bound)
    lines.push(`largest gap between the activations' mean and the layer's shift: at most ` +
      `${item("shift_gap")}`);
  }
  return `<p>${lines.join("<br>")}</p>`;
}

function render({model, el}) {
  const root = element("div", {class: "nc-shift normcore-shift-chart"});
  const where = element("p", {class: "nc-where"});
  const group = element("div", {class: "nc-toggle", role: "group", "aria-label": "network"});
  const image = element("img", {class: "nc-chart"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  group.append(element("span", {class: "nc-label"}, "network"));
  const results = model.get("results");
  for (const [key, result] of Object.entries(results)) {
    const button = element("button", {type: "button", "data-value": key}, result.label);
    button.addEventListener("click", () => {
      model.set("state", {variant: key});
      model.save_changes();
    });
    group.append(button);
  }
  root.append(where, group, image, out);
  el.append(root);

  return follow(model, (token) => {
    const chosen = model.get("state").variant;
    const result = results[chosen];
    group.querySelectorAll("button").forEach((b) => {
      b.setAttribute("aria-pressed", String(b.dataset.value === chosen));
    });
    image.src = result.src;
    image.alt = result.alt;
    out.innerHTML = readout(result.figures);
    showWhere(where, model, token, result.figures,
      "Runs in this page: both networks were trained when the chapter " +
        "was built; the switch shows either, no kernel needed.");
  });
}

export default {render};
