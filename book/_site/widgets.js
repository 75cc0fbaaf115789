/* normcore's own loader for the book's widgets on the static site (not from any package; see
 * book/_vendor/README.md). _config.yml loads it, as an ES module, on the pages that show widgets
 * (nb_ipywidgets_js); nothing else of a widget manager is loaded there.
 *
 * Every widget in the book is an anywidget: its saved model state carries its whole view as one
 * ES module (`_esm`, the bundle normcore/widgets/_esm.py writes) and its style sheet (`_css`).
 * So a page needs no ipywidgets manager and no require.js to show one: this loader reads the
 * page's saved widget state (the <script type="application/vnd.jupyter.widget-state+json"> that
 * myst-nb writes), and for each widget view (<script type="...widget-view+json">) imports that
 * module from a blob: URL and calls its render({model, el}) with a small model that holds the
 * saved state, as anywidget's own front end does. A static page has no kernel: `save_changes`
 * keeps the change in the page, and nothing is sent anywhere.
 *
 * The build writes this file's text into each widget page as an inline module script
 * (book/_ext/editions.py): chromium refuses a module script's file over file://, not an inline
 * one, so the pages work opened from disk too.
 *
 * JupyterLab never loads this file: there the real widget manager runs the same modules.
 */

const STATE = "application/vnd.jupyter.widget-state+json";
const VIEW = "application/vnd.jupyter.widget-view+json";

/** The part of anywidget's model interface the book's views use: get, set, save_changes, on,
 * off (and send, which a page without a kernel cannot do). As in Backbone, `set` announces
 * "change:<name>" only when the value really changed (compared as JSON). */
class PageModel {
  constructor(values) {
    this.values = {...values};
    this.listeners = new Map();   // event name -> [callback, ...]
  }

  get(name) {
    return this.values[name];
  }

  set(name, value) {
    const changed = JSON.stringify(this.values[name]) !== JSON.stringify(value);
    this.values[name] = value;
    if (changed) {
      this.emit(`change:${name}`, value);
      this.emit("change", value);
    }
  }

  save_changes() {}   // no kernel to save to: the page's state is the state

  send() {}           // no kernel to message

  on(event, callback) {
    for (const name of event.split(/\s+/).filter(Boolean)) {
      this.listeners.set(name, [...(this.listeners.get(name) || []), callback]);
    }
  }

  off(event, callback) {
    if (!event) {
      this.listeners.clear();
      return;
    }
    for (const name of event.split(/\s+/).filter(Boolean)) {
      const kept = callback ? (this.listeners.get(name) || []).filter((c) => c !== callback) : [];
      this.listeners.set(name, kept);
    }
  }

  emit(name, value) {
    for (const callback of [...(this.listeners.get(name) || [])]) callback(this, value);
  }
}

/** The page's saved models, by id (several state scripts are merged). */
function savedModels() {
  const models = {};
  for (const script of document.querySelectorAll(`script[type="${STATE}"]`)) {
    Object.assign(models, JSON.parse(script.textContent).state || {});
  }
  return models;
}

/** A module's default export as anywidget reads it: an object, or a function that makes one. */
async function widgetOf(esm) {
  const url = URL.createObjectURL(new Blob([esm], {type: "text/javascript"}));
  try {
    const module = await import(url);
    const made = module.default;
    return typeof made === "function" ? await made() : made;
  } finally {
    URL.revokeObjectURL(url);
  }
}

const styled = new Set();

/** Show the view that `script` names in a new element just before it. */
async function mount(script, models) {
  const el = document.createElement("div");
  el.className = "widget-subarea nc-widget-view";
  script.before(el);
  const {model_id: id} = JSON.parse(script.textContent);
  const saved = models[id];
  if (!saved || saved.model_module !== "anywidget" || typeof saved.state._esm !== "string") {
    el.textContent = "This widget runs only in JupyterLab.";
    throw new Error(`widget ${id}: no anywidget module in the page's saved state`);
  }
  const css = saved.state._css;
  if (css && !styled.has(css)) {
    styled.add(css);
    const style = document.createElement("style");
    style.textContent = css;
    document.head.append(style);
  }
  const widget = await widgetOf(saved.state._esm);
  const model = new PageModel(saved.state);
  if (widget.initialize) await widget.initialize({model});
  await widget.render({model, el});
  el.dataset.mounted = "true";
}

/** What a view that could not mount says in its place: opened from disk, the one command that
 * serves the site (a browser may refuse what chromium allows). */
function refused(script, error) {
  const el = script.previousElementSibling;
  if (el && el.classList.contains("nc-widget-view") && !el.dataset.mounted) {
    el.classList.add("nc-widget-refused");
    el.textContent = location.protocol === "file:"
      ? "This widget did not start in a page opened from disk in this browser. Serve the site " +
        "instead: run `make serve` in the book's folder and open http://127.0.0.1:8000/."
      : `This widget did not start (${error.message}).`;
  }
}

const models = savedModels();
await Promise.all(Array.from(document.querySelectorAll(`script[type="${VIEW}"]`), (script) =>
  mount(script, models).catch((error) => {
    refused(script, error);
    console.error(`normcore widgets: ${error.message}`);
  })));
document.documentElement.dataset.widgets = "mounted";
performance.mark("nc-widgets-mounted");   // the browser tests report it beside the load event
