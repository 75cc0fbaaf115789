// The preface's epsilon slider, one view for JupyterLab and the static site (anywidget): the
// page standardises the preface's mini-batch itself (standardise.js, normcore's routine in
// JavaScript) at the epsilon the slider picks, and shows what the last row's first entry becomes.

import {standardise} from "./standardise.js";
import {element, showWhere} from "./page.js";
import {follow} from "./view.js";

/** Epsilon for a slider stop: the decimal literal 1e<exponent>, read as Python reads it. */
export function epsilonAt(exponent) {
  return Number(`1e${exponent}`);
}

/** The figures on show for a state {exponent, x}: the batch layer's output (scale 1,
 * shift 0, training) for the last row's first entry, at epsilon = 1e<exponent>. */
export function figures(state) {
  const st = standardise(state.x, 0, epsilonAt(state.exponent));
  return {entry: st.z[state.x.length - 1][0]};
}

/** Move the slider to a stop (the one action of this widget). */
export function setExponent(state, exponent) {
  return {...state, exponent};
}

/** Epsilon as the readout writes it (Python's format(eps, ".0e")). */
export function shown(exponent) {
  const sign = exponent < 0 ? "-" : "+";
  return `1e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
}

function render({model, el}) {
  const root = element("div", {class: "nc-epsilon normcore-epsilon"});
  const where = element("p", {class: "nc-where"});
  const line = element("label", {class: "nc-slider"});
  const low = model.get("low");
  const high = model.get("high");
  const slider = element("input", {type: "range", min: String(low), max: String(high), step: "1",
    "aria-label": "epsilon, as a power of ten"});
  const value = element("output", {class: "nc-slider-value"});
  line.append(element("span", {class: "nc-label"}, "ε"), slider, value);
  const out = element("p", {class: "nc-readout"});
  root.append(where, line, out);
  el.append(root);
  slider.addEventListener("input", () => {
    model.set("state", setExponent(model.get("state"), Number(slider.value)));
    model.save_changes();
  });

  return follow(model, (token) => {
    const state = model.get("state");
    const f = figures(state);
    const last = state.x[state.x.length - 1][0];
    if (Number(slider.value) !== state.exponent) slider.value = String(state.exponent);
    slider.setAttribute("aria-valuetext", shown(state.exponent));
    value.textContent = shown(state.exponent);
    out.innerHTML = `ε = ${shown(state.exponent)}: the entry ${last} becomes ` +
      `<b data-key="entry" data-value="${f.entry}">${f.entry.toFixed(4)}</b>`;
    showWhere(where, model, token, f,
      "Runs in this page: your browser standardises the mini-batch at each " +
        "epsilon with normcore's arithmetic in JavaScript; no kernel is needed.");
  });
}

export default {render};
