// What the views of chapters 1, 3, 4 and 5 are built of, written once: the form a reader sets
// (menus and text boxes), the frame a computing view is drawn in, the loop that draws it again on
// every change of the state or of the kernel's answer, and the marked-up figures the browser
// tests read (each carries its full value in data-value beside the digits shown).

import {InputError, friendly} from "./input.js";
import {ask, element, escape, showWhere} from "./page.js";

/** A figure shown as `text`, keyed for the tests with its full `value`. */
export function figure(key, value, text) {
  return `<b data-key="${key}" data-value="${value}">${text}</b>`;
}

/** A block as a table captioned `title`: rows and units numbered, each cell keyed `key:i,j`
 * with its full value and shown to `decimals`. */
export function matrixTable(values, title, key, decimals = 4) {
  const head = values[0].map((_, j) => `<th scope="col">unit ${j + 1}</th>`).join("");
  const body = values.map((row, i) => `<tr><th scope="row">row ${i + 1}</th>` +
    row.map((v, j) => `<td data-key="${key}:${i},${j}" data-value="${v}">` +
      `${v.toFixed(decimals)}</td>`).join("") + "</tr>").join("");
  return `<table class="nc-table"><caption>${escape(title)}</caption>` +
    `<thead><tr><td></td>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** Draw with `draw(token)` now and whenever the state or the kernel's answer changes; the token
 * is this view's request to the kernel. Returns the view's clean-up. */
export function follow(model, draw) {
  const update = () => draw(token);
  model.on("change:state", update);
  model.on("change:kernel", update);
  const token = ask(model);
  update();
  return () => {
    model.off("change:state", update);
    model.off("change:kernel", update);
  };
}

/** The controls of a view: each field shows the state's text for it (unless the reader is in
 * it) and hands what the reader chose or typed to the model as a new state. */
export class Form {
  constructor(model) {
    this.model = model;
    this.node = element("div", {class: "nc-form"});
    this.fields = [];
  }

  /** The state with `key` set to `value`, sent to the model. */
  set(key, value) {
    this.act({...this.model.get("state"), [key]: value});
  }

  /** Send `state` to the model (in Lab, the kernel answers it too). */
  act(state) {
    this.model.set("state", state);
    this.model.save_changes();
  }

  /** A field under `label`: `current()` is the state's text for it. */
  field(label, input, current) {
    const line = element("label", {class: "nc-field"});
    line.append(element("span", {class: "nc-label"}, label), input);
    this.fields.push([input, current]);
    this.node.append(line);
    return input;
  }

  /** A menu of [text, value] options for the state's `key`. */
  menu(key, label, options) {
    const input = element("select", {"data-key": key});
    for (const [text, value] of options) input.append(element("option", {value}, text));
    input.addEventListener("change", () => this.set(key, input.value));
    return this.field(label, input, () => this.model.get("state")[key]);
  }

  /** A text box (a box of `rows` lines if rows > 0), keyed `key`: leaving it, or Enter in a
   * one-line box, hands a changed text to `commit` (default: set the state's `key`). */
  box(key, label, {size = "6", rows = 0, current, commit} = {}) {
    current = current || (() => this.model.get("state")[key]);
    commit = commit || ((text) => this.set(key, text));
    const input = rows
      ? element("textarea", {"data-key": key, rows: String(rows), cols: "18"})
      : element("input", {type: "text", "data-key": key, size});
    const use = () => { if (input.value !== current()) commit(input.value); };
    input.addEventListener("change", use);
    if (!rows) input.addEventListener("keydown", (e) => { if (e.key === "Enter") use(); });
    return this.field(label, input, current);
  }

  /** A line of help under the fields. */
  hint(text) {
    this.node.append(element("p", {class: "nc-hint"}, text));
  }

  /** Show the state in every field the reader is not typing in. */
  show() {
    for (const [input, current] of this.fields) {
      if (document.activeElement !== input) input.value = current();
    }
  }
}

/**
 * A view that computes in the page (chapters 3, 4, 5), drawn into `el` in a div of `classes`:
 * the "where it runs" line, the form (`build(form)` adds its fields), a message line and the
 * readout. `figures(state)` is the model's arithmetic; it throws an InputError (input.js) for
 * what cannot be used, and then the message gives the sentence followed by `kept` and the readout keeps the
 * last figures that could be computed. `readout(state, f)` is the figures' HTML. Returns the
 * view's clean-up.
 */
export function computingView({model, el, classes, build, figures, readout, kept}) {
  const where = element("p", {class: "nc-where"});
  const form = new Form(model);
  const message = element("div", {class: "nc-message", role: "status"});
  const out = element("div", {class: "nc-readout normcore-readout"});
  const root = element("div", {class: classes});
  root.append(where, form.node, message, out);
  el.append(root);
  build(form);
  return follow(model, (token) => {
    form.show();
    const state = model.get("state");
    let f;
    try {
      f = figures(state);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      message.innerHTML = `<span class="nc-error" data-error="${escape(error.message)}">` +
        `${escape(friendly(error.message))} ${kept}</span>`;
      where.dataset.runs = "page";
      return;
    }
    message.textContent = "";
    out.innerHTML = readout(state, f);
    showWhere(where, model, token, f);
  });
}
