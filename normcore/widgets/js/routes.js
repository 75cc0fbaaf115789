// Chapter 3's explorer, one view for JupyterLab and the static site (anywidget): choose a block
// and an arriving slope; see the passed-down block collected by the three routes, the oracle's
// and the naive one, computed in the page (routes-model.js).

import * as rm from "./routes-model.js";
import {friendly} from "./input.js";
import {ask, element, escape, showWhere} from "./page.js";

/** A small table of a block, rounded to `decimals`; each cell carries its full value. */
function table(values, title, key, decimals = 4) {
  const head = values[0].map((_, j) => `<th scope="col">unit ${j + 1}</th>`).join("");
  const body = values.map((row, i) => `<tr><th scope="row">row ${i + 1}</th>` +
    row.map((v, j) => `<td data-key="${key}:${i},${j}" data-value="${v}">${v.toFixed(decimals)}</td>`).join("") +
    "</tr>").join("");
  return `<div class="nc-block"><table class="nc-table"><caption>${escape(title)}</caption>` +
    `<thead><tr><td></td>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function sums(values, key) {
  return values.map((v, j) => {
    const shown = Math.abs(v) < 5e-5 ? 0 : v;
    return `<span data-key="${key}:${j}" data-value="${v}">${shown.toFixed(4)}</span>`;
  }).join(", ");
}

export function readout(f) {
  const item = (key, value, text) => `<b data-key="${key}" data-value="${value}">${text}</b>`;
  return table(f.true, "collected (three routes)", "collected") +
    table(f.oracle, "oracle (finite difference)", "oracle") +
    table(f.naive, "naive d / s", "naive") +
    "<ul>" +
    `<li>collected block's largest gap to the oracle: ${item("true_gap", f.true_gap, f.true_gap.toExponential(2))}` +
    " (the oracle's own rounding)</li>" +
    `<li>naive block's largest error: ${item("naive_error", f.naive_error, f.naive_error.toFixed(4))} ` +
    `(largest true slope ${item("largest_true", f.largest_true, f.largest_true.toFixed(4))})</li>` +
    `<li>naive cells with the wrong sign: ${item("wrong_sign", f.wrong_sign, f.wrong_sign)} of ` +
    `${item("cells", f.cells, f.cells)}</li>` +
    `<li>column sums, collected: ${sums(f.true_sums, "true_sums")}; naive: ` +
    `${sums(f.naive_sums, "naive_sums")}</li></ul>`;
}

function render({model, el}) {
  const root = element("div", {class: "nc-routes normcore-routes"});
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
  function text(key, label, rows = 0) {
    const line = element("label", {class: "nc-field"});
    const input = rows
      ? element("textarea", {"data-key": key, rows: String(rows), cols: "18"})
      : element("input", {type: "text", "data-key": key, size: "6"});
    const commit = () => { if (input.value !== model.get("state")[key]) set(key, input.value); };
    input.addEventListener("change", commit);
    if (!rows) input.addEventListener("keydown", (e) => { if (e.key === "Enter") commit(); });
    line.append(element("span", {class: "nc-label"}, label), input);
    fields[key] = input;
    return line;
  }
  controls.append(
    select("source", "block", [["the worked four", "worked"], ["a random block", "random"],
      ["my own block", "typed"]]),
    text("rows", "rows"), text("columns", "columns"), text("seed", "seed"),
    text("typed", "my block", 4),
    select("slope", "arriving", [["1, 2, 3, ... across the block", "counting"],
      ["all ones", "ones"], ["random (seeded)", "random"], ["my own slope", "typed"]]),
    text("typed_slope", "my slope", 4),
    element("p", {class: "nc-hint"}, "Type, then press Enter (or click elsewhere in a " +
      "box of several lines): the figures follow."));

  let good = null;
  function update() {
    const s = model.get("state");
    for (const [key, input] of Object.entries(fields)) {
      if (document.activeElement !== input) input.value = s[key];
    }
    let f;
    try {
      f = rm.figures(s);
    } catch (error) {
      if (!(error instanceof rm.InputError)) throw error;
      message.innerHTML = `<span class="nc-error" data-error="${escape(error.message)}">` +
        `${escape(friendly(error.message))} The figures below are for the last block that ` +
        "could be used.</span>";
      where.dataset.runs = "page";
      return;
    }
    good = f;
    message.textContent = "";
    out.innerHTML = readout(f);
    showWhere(where, model, token, f);
  }
  model.on("change:state", update);
  model.on("change:kernel", update);
  const token = ask(model);
  update();
  if (good === null) out.textContent = "";
  return () => {
    model.off("change:state", update);
    model.off("change:kernel", update);
  };
}

export default {render};
