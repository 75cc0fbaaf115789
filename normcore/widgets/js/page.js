// What every live widget's page does besides its own arithmetic (normcore/widgets/_page.py):
// ask the kernel, if there is one, for normcore's figures, and say in one line where the widget
// runs and, in JupyterLab, how far the kernel's figures are from the page's.

/** The largest difference between two figure dictionaries (null if they differ in shape). */
export function largestDifference(a, b) {
  let largest = 0;
  const walk = (x, y) => {
    if (Array.isArray(x) && Array.isArray(y)) {
      return x.length === y.length && x.every((v, i) => walk(v, y[i]));
    }
    if (typeof x === "number" && typeof y === "number") {
      largest = Math.max(largest, Math.abs(x - y));
      return true;
    }
    return x === y;
  };
  const keys = Object.keys(a);
  const same = keys.length === Object.keys(b).length && keys.every((k) => walk(a[k], b[k]));
  return same ? largest : null;
}

/** A token for this view; setting it asks a kernel to compute every state (a static page has
 * no kernel, and saving there does nothing). */
export function ask(model) {
  const token = Math.random().toString(36).slice(2);
  model.set("request", token);
  model.save_changes();
  return token;
}

/** What the "where it runs" line says on a static page (a view may say what it does instead). */
const IN_PAGE = "Runs in this page: your browser computes every figure with normcore's " +
  "arithmetic in JavaScript; no kernel is needed.";

/** Fill the "where it runs" line: `figures` are the page's own for the state on show. */
export function showWhere(where, model, token, figures, inPage = IN_PAGE) {
  const kernel = model.get("kernel") || {};
  const state = model.get("state");
  if (kernel.token === token && JSON.stringify(kernel.state) === JSON.stringify(state)) {
    const gap = largestDifference(figures, kernel.figures);
    where.innerHTML = "Runs in this page and on the kernel: normcore's Python figures and the " +
      "page's " + (gap === null ? "<b>differ</b>."
        : `differ by at most <b data-key="kernel-gap" data-value="${gap}">` +
          `${gap.toExponential(1)}</b>.`);
    where.dataset.runs = "kernel";
  } else {
    where.textContent = inPage;
    where.dataset.runs = "page";
  }
}

/** A DOM element with attributes and text. */
export function element(tag, attributes = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Text made safe for innerHTML. */
export function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
