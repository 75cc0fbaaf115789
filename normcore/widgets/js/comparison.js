// Chapter 6's widget, one view for JupyterLab and the static site (anywidget): tick
// arrangements and seeds; the first table averages the chapter's own runs over the seeds
// ticked, the second pairs each arrangement with the plain network person by person with a
// bootstrap over people, both in the page (comparison-model.js). Nothing is trained again, so
// no kernel is needed.

import * as cm from "./comparison-model.js";
import {InputError, friendly} from "./input.js";
import {element, escape, showWhere} from "./page.js";
import {follow} from "./view.js";

// how each column is shown: the chapter's table prints these digits
const SHOWN = {train_accuracy: 3, held_accuracy: 3, held_low: 2, held_high: 2, train_loss: 4,
  held_loss: 3};

export function readout(f, labels, folds) {
  const value = (key, field, i) => {
    const v = f[field][i];
    return `<span data-key="${key}:${field}" data-value="${v}">${v.toFixed(SHOWN[field])}</span>`;
  };
  const rows = f.arrangements.map((key, i) => `<tr><th scope="row">${escape(labels[key])}</th>` +
    `<td>${value(key, "train_accuracy", i)}</td><td>${value(key, "held_accuracy", i)}</td>` +
    `<td>${value(key, "held_low", i)} to ${value(key, "held_high", i)}</td>` +
    `<td>${value(key, "train_loss", i)}</td><td>${value(key, "held_loss", i)}</td></tr>`).join("");
  const seeds = f.seeds === 1 ? "1 seed" : `${f.seeds} seeds`;
  return `<table class="nc-table"><caption>mean over <span data-key="seeds" ` +
    `data-value="${f.seeds}">${seeds}</span> (${folds} fold runs each)</caption>` +
    '<thead><tr><th scope="col">arrangement</th><th scope="col">training accuracy</th>' +
    '<th scope="col">held-out accuracy</th><th scope="col">held-out range over seeds</th>' +
    '<th scope="col">training loss</th><th scope="col">held-out loss</th></tr></thead>' +
    `<tbody>${rows}</tbody></table>`;
}

const signed = (v, digits) => (v >= 0 ? "+" : "") + v.toFixed(digits);

/** The paired table: each arrangement ticked against the plain network, person by person. */
export function pairedReadout(f, labels, people, draws, interval) {
  if (!f.paired.length) {
    return '<p class="nc-hint">Tick an arrangement besides plain to pair it with the plain ' +
      "network person by person.</p>";
  }
  const value = (key, field, i, digits, sign = true) => {
    const v = f[`paired_${field}`][i];
    return `<span data-key="${key}:paired_${field}" data-value="${v}">` +
      `${sign ? signed(v, digits) : String(v)}</span>`;
  };
  const rows = f.paired.map((key, i) => `<tr><th scope="row">${escape(labels[key])}</th>` +
    `<td>${value(key, "gap", i, 3)}</td>` +
    `<td>${value(key, "people_low", i, 2)} to ${value(key, "people_high", i, 2)}</td>` +
    `<td>${value(key, "seed_low", i, 2)} to ${value(key, "seed_high", i, 2)}</td>` +
    `<td>${value(key, "worse", i, 0, false)}</td><td>${value(key, "better", i, 0, false)}</td>` +
    "</tr>").join("");
  const seeds = f.seeds === 1 ? "1 seed" : `${f.seeds} seeds`;
  return `<table class="nc-table"><caption>against plain, person by person, over ${seeds}: ` +
    `the interval over people resamples the ${people} held-out verdicts ${draws} times ` +
    `(${interval[0]} to ${interval[1]} per cent; the training people stay fixed), the ` +
    "one over seeds is Student's t (0.975) standard errors of the per-seed gaps</caption>" +
    '<thead><tr><th scope="col">arrangement</th><th scope="col">gap in held-out accuracy</th>' +
    '<th scope="col">over people</th><th scope="col">over seeds</th>' +
    '<th scope="col">people worse</th><th scope="col">people better</th></tr></thead>' +
    `<tbody>${rows}</tbody></table>`;
}

function render({model, el}) {
  const results = model.get("results");
  const root = element("div", {class: "nc-comparison normcore-comparison"});
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
  function group(legend, items) {
    const set = element("fieldset", {class: "nc-choices"});
    set.append(element("legend", {}, legend));
    for (const [label, key, ticked, toggle] of items) {
      const line = element("label", {class: "nc-choice"});
      const box = element("input", {type: "checkbox", "data-key": key});
      box.addEventListener("change", () => act(toggle(model.get("state"), box.checked)));
      line.append(box, document.createTextNode(` ${label}`));
      set.append(line);
      boxes.push([box, ticked]);
    }
    return set;
  }
  controls.append(group("arrangements", results.order.map((k) => [results.labels[k],
    `arrangement:${k}`, () => model.get("state").arrangements.includes(k),
    (state, on) => cm.toggleArrangement(state, k, on)])));
  controls.append(group("seeds", results.seeds.map((s) => [`seed ${s}`, `seed:${s}`,
    () => model.get("state").seeds.includes(s), (state, on) => cm.toggleSeed(state, s, on)])));
  controls.append(element("p", {class: "nc-hint"},
    `Every run was trained when the chapter ran: learning rate ${results.rate}, ` +
    `${results.epochs} epochs, ${results.folds} folds per seed. Ticking a box works both ` +
    "tables out again over the seeds ticked."));

  const runs = results.order.length * results.seeds.length * results.folds;

  function update(token) {
    for (const [box, ticked] of boxes) box.checked = ticked();
    let f;
    try {
      f = cm.figures(model.get("state"), results);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      message.innerHTML = `<span class="nc-error">${escape(friendly(error.message))} The ` +
        "table below is for the last choice that had one.</span>";
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = readout(f, results.labels, results.folds) +
      pairedReadout(f, results.labels, results.people, results.draws.length / results.people,
        results.interval);
    showWhere(where, model, token, f,
      `Runs in this page: the chapter's ${runs} runs were trained when it was ` +
        "built; your browser averages them over the seeds you tick, no kernel needed.");
  }
  return follow(model, update);
}

export default {render};
