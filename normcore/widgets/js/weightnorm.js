// Chapter 5's widget, one view for JupyterLab and the static site (anywidget): three direction
// lengths and a stride; one step of the weight-normalised layer and of the dense layer, computed
// in the page (weightnorm-model.js).

import * as wm from "./weightnorm-model.js";
import {friendly} from "./input.js";
import {ask, element, escape, showWhere} from "./page.js";

export function readout(f) {
  const cell = (key, v) => `<td data-key="${key}" data-value="${v}">${v.toFixed(4)}</td>`;
  const rows = f.before.map((b, i) => `<tr><th scope="row">${i + 1}</th>${cell(`before:${i}`, b)}` +
    `${cell(`weightnorm:${i}`, f.weightnorm[i])}${cell(`dense:${i}`, f.dense[i])}</tr>`).join("");
  return '<table class="nc-table"><thead><tr><th scope="col">neuron</th>' +
    '<th scope="col">length before</th><th scope="col">after (weight norm)</th>' +
    `<th scope="col">after (dense)</th></tr></thead><tbody>${rows}</tbody></table>` +
    "<p>distance between the two layers' effective weights after the step: " +
    `<b data-key="distance" data-value="${f.distance}">${f.distance.toFixed(4)}</b></p>`;
}

function render({model, el}) {
  const root = element("div", {class: "nc-weightnorm normcore-weightnorm"});
  const where = element("p", {class: "nc-where"});
  const controls = element("div", {class: "nc-form"});
  const message = element("div", {class: "nc-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  root.append(where, controls, message, out);
  el.append(root);
  const act = (next) => {
    model.set("state", next);
    model.save_changes();
  };
  const boxes = [];
  function box(label, key, current, action) {
    const line = element("label", {class: "nc-field"});
    const input = element("input", {type: "text", "data-key": key, size: "7"});
    const commit = () => { if (input.value !== current()) act(action(input.value)); };
    input.addEventListener("change", commit);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") commit(); });
    line.append(element("span", {class: "nc-label"}, label), input);
    boxes.push([input, current]);
    return line;
  }
  [0, 1, 2].forEach((i) => controls.append(box(`length ${i + 1}`, `length:${i}`,
    () => model.get("state").lengths[i], (t) => wm.setLength(model.get("state"), i, t))));
  controls.append(box("stride", "stride", () => model.get("state").stride,
    (t) => wm.setStride(model.get("state"), t)));
  controls.append(element("p", {class: "nc-hint"},
    "Type a number, then press Enter or click elsewhere: the step is taken again."));

  function update() {
    for (const [input, current] of boxes) {
      if (document.activeElement !== input) input.value = current();
    }
    let f;
    try {
      f = wm.figures(model.get("state"), model.get("case"));
    } catch (error) {
      if (!(error instanceof wm.InputError)) throw error;
      message.innerHTML = `<span class="nc-error">${escape(friendly(error.message))} The ` +
        "table shows the last step that could be taken.</span>";
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = readout(f);
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
