// Chapter 7's widget, one view for JupyterLab and the static site (anywidget): every run of the
// chapter's rate sweep was trained when the chapter ran, and its figures stored in `results`
// (normcore/widgets/rates_model.py); the controls choose one, the page shows it.

import {element, escape, showWhere} from "./page.js";
import {follow} from "./view.js";

/** The name of a choice in `results`, as rates_model.key writes it. */
export function key(state) {
  return `${state.normalised ? "normalised" : "plain"} ${state.rate} run ${state.run}`;
}

export function readout(f) {
  if ("refused_epoch" in f) {
    const at = (k) => `<b data-key="${k}" data-value="${f[k]}">${f[k]}</b>`;
    return `<p>normcore refused to go on in epoch ${at("refused_epoch")}, batch ` +
      `${at("refused_batch")}: the values reaching a layer grew so large that their squares ` +
      "could overflow, so the layer stopped the run instead of computing on (the dashes of " +
      "the sweep above).</p>";
  }
  const line = (label, k) => `<tr><th scope="row">${label}</th>` +
    `<td data-key="${k}" data-value="${escape(f[k])}">${escape(f[k])}</td></tr>`;
  let rows = line("final training loss", "loss") + line("dead units", "dead") +
    line("test accuracy, by the running figures", "accuracy");
  if ("batch_accuracy" in f) {
    rows += line("test accuracy, by each batch's statistics (batches of 20)", "batch_accuracy") +
      line("the same, test rows shuffled", "shuffled_accuracy") +
      line("subscribers whose class the shuffle changes", "changed_by_order");
  }
  const note = f.chaotic
    ? '<p class="nc-hint">At this learning rate the loss and the accuracies change with the ' +
      "last bit of any sum (see the nudged runs above), so no digit of them is shown.</p>"
    : "";
  return `<table class="nc-table"><tbody>${rows}</tbody></table>${note}`;
}

function render({model, el}) {
  const rates = model.get("rates");
  const results = model.get("results");
  const root = element("div", {class: "nc-rates normcore-rates"});
  const where = element("p", {class: "nc-where"});
  const controls = element("div", {class: "nc-form"});
  const message = element("div", {class: "nc-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  root.append(where, controls, message, out);
  el.append(root);
  // The keys a reader presses here are the widget's: JupyterLab's notebook would otherwise take
  // them as its own shortcuts (an arrow key would move between cells, not along the slider).
  root.addEventListener("keydown", (event) => event.stopPropagation());
  const choose = (change) => {
    model.set("state", {...model.get("state"), ...change});
    model.save_changes();
  };

  const rateField = element("label", {class: "nc-field"});
  const slider = element("input", {type: "range", min: "0", max: String(rates.length - 1),
                                   step: "1", "aria-label": "learning rate", "data-key": "rate"});
  const shown = element("output", {class: "nc-value"});
  slider.addEventListener("input", () => choose({rate: rates[Number(slider.value)]}));
  rateField.append(element("span", {class: "nc-label"}, "learning rate"), slider, shown);

  const normField = element("label", {class: "nc-field"});
  const box = element("input", {type: "checkbox", "data-key": "normalised"});
  box.addEventListener("change", () => choose({normalised: box.checked}));
  normField.append(box, element("span", {}, "batch layer"));

  const runs = element("div", {class: "nc-toggle", role: "group", "aria-label": "run"});
  runs.append(element("span", {class: "nc-label"}, "run"));
  for (const run of [1, 2]) {
    const button = element("button", {type: "button", "data-value": String(run)}, `run ${run}`);
    button.addEventListener("click", () => choose({run}));
    runs.append(button);
  }
  controls.append(rateField, normField, runs);

  function update(token) {
    const state = model.get("state");
    const index = rates.indexOf(state.rate);
    slider.value = String(Math.max(index, 0));
    slider.setAttribute("aria-valuetext", state.rate);
    shown.textContent = state.rate;
    box.checked = Boolean(state.normalised);
    runs.querySelectorAll("button").forEach((b) => {
      b.setAttribute("aria-pressed", String(Number(b.dataset.value) === state.run));
    });
    const figures = results[key(state)];
    if (figures === undefined) {
      message.innerHTML = `<span class="nc-error">The sweep holds no run for ` +
        `${escape(key(state))}. The figures below are for the last run chosen.</span>`;
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = readout(figures);
    showWhere(where, model, token, figures,
      "Runs in this page: every run it offers was trained when the " +
        "chapter ran; the controls choose among them, no kernel needed.");
  }
  return follow(model, update);
}

export default {render};
