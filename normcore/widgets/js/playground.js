// Chapter 2's playground, the one view used in JupyterLab and on the static site (anywidget).
//
// The page computes every figure itself (playground-model.js, over standardise.js), so the
// widget computes with no kernel. In JupyterLab the kernel also computes normcore's figures in
// Python for each state the page sends; the page shows the largest difference between the two.

import * as pm from "./playground-model.js";
import {friendly} from "./input.js";
import {ask, element, escape, showWhere} from "./page.js";

const KINDS = [["Batch", "batch"], ["Layer", "layer"], ["RMS", "rms"]];
const MODES = [["train", "train"], ["eval", "eval"]];
const SPAN = 10;      // the sliders run over ±SPAN, widened in steps of SPAN to hold a value
const STEP = 0.001;   // the sliders' step

const NOTES = {
  "undo-needs-rows": "Undo needs at least one row switched on.",
  "undo-not-batch": "Undo exactly is a batch-layer move: layer and RMS normalisation read " +
    "along each row, and one scale and shift per feature cannot give every row back. " +
    "Nothing was changed.",
  "undo-train": "Undo exactly: each scale set to the batch's own divisor √(variance + ε) " +
    "and each shift to its mean, so the output is the input back.",
  "undo-eval": "Undo exactly: each scale set to the running divisor " +
    "√(running variance + ε) and each shift to the running mean, so the output is the input back.",
  "step-needs-rows": "Step needs at least one row switched on.",
  "step-not-batch": "Stepped with a zero gradient: nothing moved. Layer and RMS normalisation " +
    "keep no running statistics.",
  "step": "Step {steps}: the running statistics updated with the batch's mean and biased variance " +
    `with weight ${Number((1 - pm.MOMENTUM).toPrecision(12))} (momentum ${pm.MOMENTUM}); ` +
    "scale and shift unchanged.",
  "fresh": "A fresh layer: scale 1, shift 0, running mean 0, running variance 1.",
  "size-limits": `The input holds 1 to ${pm.MAX_ROWS} rows and 1 to ${pm.MAX_FEATURES} features.`,
};

/** A number as the readout shows it: seven significant figures, no "-0". */
export function fmt(value) {
  const shown = Number(value.toPrecision(7));
  return Object.is(shown, -0) ? "0" : String(shown);
}

function td(value, key) {
  return `<td data-key="${key}" data-value="${value}">${fmt(value)}</td>`;
}

/** A readout table: `rows` are [label, [[value, key], ...]]. */
function table(caption, header, rows) {
  const head = header.map((h) => `<th scope="col">${escape(h)}</th>`).join("");
  const body = rows.map(([label, cells]) =>
    `<tr><th scope="row">${escape(label)}</th>${cells.map(([v, k]) => td(v, k)).join("")}</tr>`
  ).join("");
  return `<table class="nc-table"><caption>${escape(caption)}</caption>` +
    `<thead><tr><td></td>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** The readout's HTML for a state and its figures. */
export function readout(state, f) {
  const names = {batch: "Batch", layer: "Layer", rms: "RMS"};
  const head = `<p class="nc-head"><b>${names[state.kind]} normalisation</b>, ${state.mode}, ` +
    `${f.rows_on.length} of ${state.texts.length} rows switched on, ε = ${pm.EPSILON.toExponential()}</p>`;
  if (f.output === null) {
    return head + "<p><b>No rows are switched on.</b> A normalising layer needs at least one " +
      "row to normalise; tick a row's box to bring it back.</p>";
  }
  const features = state.scale.map((_, j) => `feature ${j + 1}`);
  const output = table("output", features, f.output.map((row, r) =>
    [`row ${f.rows_on[r] + 1}`, row.map((v, j) => [v, `output:${r},${j}`])]));
  const gap = `<p>largest gap between the output and the input: ` +
    `<b data-key="gap" data-value="${f.gap}">${Number(f.gap.toPrecision(3))}</b></p>`;
  const parts = [head, output, gap];
  if (state.kind === "batch") {
    const batch = table("the batch's statistics (used while training)", features, [
      ["mean", "batch_mean"], ["variance (biased)", "batch_variance"],
      ["√(variance + ε)", "batch_divisor"], ["variance / (variance + ε)", "batch_share"],
    ].map(([label, key]) => [label, f[key].map((v, j) => [v, `${key}:${j}`])]));
    const running = table(
      `running statistics after ${state.steps} steps (used in evaluation mode)`, features, [
        ["running mean", "running_mean"], ["running variance", "running_var"],
        ["√(running variance + ε)", "running_divisor"],
      ].map(([label, key]) => [label, f[key].map((v, j) => [v, `${key}:${j}`])]));
    parts.push(...(state.mode === "train" ? [batch, running] : [running, batch]));
    if (state.mode === "train" && f.rows_on.length === 1) {
      parts.push("<p><i>One row while training: the batch's mean is the row itself and its " +
        "variance is zero, so every standardised value is 0. Nothing warns.</i></p>");
    }
  } else {
    const columns = state.kind === "layer"
      ? [["mean", "row_mean"], ["variance (biased)", "row_variance"],
        ["√(variance + ε)", "row_divisor"]]
      : [["mean square", "row_variance"], ["√(mean square + ε)", "row_divisor"]];
    parts.push(table("each row's statistics", columns.map(([label]) => label),
      f.rows_on.map((i, r) => [`row ${i + 1}`, columns.map(([, key]) => [f[key][r], `${key}:${r}`])])));
    parts.push("<p><i>Statistics run along each row, so training and evaluation mode give the same " +
      "output, and a row's output does not depend on the other rows.</i></p>");
  }
  return parts.join("");
}

function render({model, el}) {
  const root = element("div", {class: "nc-playground normcore-playground"});
  const where = element("p", {class: "nc-where"});
  const controls = element("div", {class: "nc-controls"});
  const results = element("div", {class: "nc-results"});
  const message = element("div", {class: "nc-message normcore-playground-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-playground-readout"});
  results.append(message, out);
  const body = element("div", {class: "nc-body"});
  body.append(controls, results);
  root.append(where, body);
  el.append(root);

  const state = () => model.get("state");
  const act = (next) => {
    model.set("state", next);
    model.save_changes();
  };

  function toggle(label, options, key, action) {
    const group = element("div", {class: "nc-toggle", role: "group", "aria-label": label});
    group.append(element("span", {class: "nc-label"}, label));
    for (const [text, value] of options) {
      const button = element("button", {type: "button", "data-value": value}, text);
      button.addEventListener("click", () => act(action(state(), value)));
      group.append(button);
    }
    return group;
  }

  function button(text, title, action) {
    const b = element("button", {type: "button", title}, text);
    b.addEventListener("click", () => act(action(state())));
    return b;
  }

  function slider(which, j) {
    const line = element("label", {class: "nc-slider"});
    const input = element("input", {type: "range", step: String(STEP), "data-which": which,
      "data-feature": String(j), "aria-label": `${which} ${j + 1}`});
    const shown = element("output", {class: "nc-slider-value"});
    input.addEventListener("input", () => act(pm.setParameter(state(), which, j,
      Number(input.value))));
    line.append(element("span", {class: "nc-label"}, `${which} ${j + 1}`), input, shown);
    return line;
  }

  function build() {
    const s = state();
    controls.replaceChildren();
    controls.append(toggle("layer", KINDS, "kind", pm.setKind),
      toggle("mode", MODES, "mode", pm.setMode));
    const grid = element("table", {class: "nc-grid"});
    const head = element("tr");
    head.append(element("th", {scope: "col"}, "row on"));
    s.scale.forEach((_, j) => head.append(element("th", {scope: "col"}, `feature ${j + 1}`)));
    grid.append(head);
    s.texts.forEach((row, i) => {
      const tr = element("tr");
      const cell = element("td");
      const check = element("input", {type: "checkbox", "aria-label": `row ${i + 1} on`});
      check.addEventListener("change", () => act(pm.setActive(state(), i, check.checked)));
      cell.append(check, document.createTextNode(` ${i + 1}`));
      tr.append(cell);
      row.forEach((_, j) => {
        const box = element("input", {type: "text", class: "nc-cell", "data-row": String(i),
          "data-feature": String(j), "aria-label": pm.cellName(i, j), size: "8"});
        const commit = () => {
          if (box.value !== state().texts[i][j]) act(pm.setCell(state(), i, j, box.value));
        };
        box.addEventListener("change", commit);
        box.addEventListener("keydown", (event) => { if (event.key === "Enter") commit(); });
        const td = element("td");
        td.append(box);
        tr.append(td);
      });
      grid.append(tr);
    });
    const hint = element("p", {class: "nc-hint"},
      "Type a number, then press Enter or click elsewhere: the cell is used then.");
    const sizes = element("div", {class: "nc-buttons"});
    sizes.append(button("+ row", "add a row of zeros", (st) => pm.resize(st, 1, 0)),
      button("− row", "drop the last row", (st) => pm.resize(st, -1, 0)),
      button("+ feature", "add a feature of zeros", (st) => pm.resize(st, 0, 1)),
      button("− feature", "drop the last feature", (st) => pm.resize(st, 0, -1)));
    const sliders = element("div", {class: "nc-sliders"});
    s.scale.forEach((_, j) => sliders.append(slider("scale", j), slider("shift", j)));
    const actions = element("div", {class: "nc-buttons"});
    actions.append(
      button("Undo exactly", "scale = the divisor √(σ²+ε), shift = the mean the layer standardises by",
        pm.undo),
      button("Step", "one real step with a zero gradient: updates the running statistics with the batch",
        pm.step),
      button("Fresh layer", "scale 1, shift 0, running mean 0, variance 1", pm.fresh));
    controls.append(grid, hint, sizes, sliders, actions);
  }

  let shape = "";
  function update() {
    const s = state();
    const now = `${s.texts.length}x${s.scale.length}`;
    if (now !== shape) {
      build();
      shape = now;
    }
    // controls show the state (a box being typed in keeps its text until it commits)
    controls.querySelectorAll(".nc-toggle button").forEach((b) => {
      const on = b.dataset.value === s.kind || b.dataset.value === s.mode;
      b.setAttribute("aria-pressed", String(on));
    });
    controls.querySelectorAll("input[type=checkbox]").forEach((c, i) => { c.checked = s.active[i]; });
    controls.querySelectorAll("input.nc-cell").forEach((box) => {
      const text = s.texts[Number(box.dataset.row)][Number(box.dataset.feature)];
      if (document.activeElement !== box || box.value === "") box.value = text;
      box.classList.toggle("nc-bad", pm.parseCell(text, 0, 0).error !== undefined);
    });
    controls.querySelectorAll("input[type=range]").forEach((input) => {
      const value = s[input.dataset.which][Number(input.dataset.feature)];
      const bound = SPAN * Math.max(1, Math.ceil(Math.abs(value) / SPAN));
      input.min = String(-bound);
      input.max = String(bound);
      if (Number(input.value) !== value) input.value = String(value);
      input.nextElementSibling.textContent = value.toFixed(4);
      input.dataset.value = String(value);
    });

    const started = performance.now();
    const f = pm.figures(s);
    out.innerHTML = readout(s, f);
    root.dataset.updateMs = String(performance.now() - started);

    const lines = pm.errors(s).map((e) => `<span class="nc-error">${escape(friendly(e))} ` +
      "That cell keeps its last number.</span>");
    if (s.note) lines.push(`<i>${NOTES[s.note].replace("{steps}", s.steps)}</i>`);
    message.innerHTML = lines.join("<br>");

    showWhere(where, model, token, f);
  }

  model.on("change:state", update);
  model.on("change:kernel", update);
  const token = ask(model);   // a kernel replies with its own figures; a static page cannot
  update();
  return () => {
    model.off("change:state", update);
    model.off("change:kernel", update);
  };
}

export default {render};
