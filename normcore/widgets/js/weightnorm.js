// Chapter 5's widget, one view for JupyterLab and the static site (anywidget): three direction
// lengths and a learning rate; one step of the weight-normalised layer and of the dense layer,
// computed in the page (weightnorm-model.js).

import * as wm from "./weightnorm-model.js";
import {computingView, figure} from "./view.js";

export function readout(state, f) {
  const cell = (key, v) => `<td data-key="${key}" data-value="${v}">${v.toFixed(4)}</td>`;
  const rows = f.before.map((b, i) => `<tr><th scope="row">${i + 1}</th>${cell(`before:${i}`, b)}` +
    `${cell(`weightnorm:${i}`, f.weightnorm[i])}${cell(`dense:${i}`, f.dense[i])}</tr>`).join("");
  return '<table class="nc-table"><thead><tr><th scope="col">neuron</th>' +
    '<th scope="col">length before</th><th scope="col">after (weight norm)</th>' +
    `<th scope="col">after (dense)</th></tr></thead><tbody>${rows}</tbody></table>` +
    "<p>distance between the two layers' effective weights after the step: " +
    `${figure("distance", f.distance, f.distance.toFixed(4))}</p>`;
}

function render({model, el}) {
  const state = () => model.get("state");
  return computingView({
    model, el, classes: "nc-weightnorm normcore-weightnorm", readout,
    figures: (s) => wm.figures(s, model.get("case")),
    kept: "The table shows the last step that could be taken.",
    build(form) {
      [0, 1, 2].forEach((i) => form.box(`length:${i}`, `length ${i + 1}`, {size: "7",
        current: () => state().lengths[i],
        commit: (text) => form.act(wm.setLength(state(), i, text))}));
      form.box("learning_rate", "learning rate", {size: "7",
        current: () => state().learning_rate,
        commit: (text) => form.act(wm.setLearningRate(state(), text))});
      form.hint("Type a number, then press Enter or click elsewhere: the step is taken again.");
    },
  });
}

export default {render};
