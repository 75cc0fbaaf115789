/* normcore's own glue between the vendored widget manager (book/_vendor/html-manager) and the
 * rest of the site; not from any npm package (see book/_vendor/README.md). Sphinx copies it to
 * _static/; _config.yml loads it on every page that shows widgets, after require.js and before
 * html-manager/embed-amd.js. It does two things:
 *
 * 0. (with 1) Maps the module name "anywidget" to _static/anywidget/index.js, the installed
 *    anywidget's AMD module, copied there by book/_ext/site_assets.py when the site is built.
 *
 * 1. Tells the widget bundle where it lives. The bundle's modules are named AMD modules
 *    ("@jupyter-widgets/html-manager/dist/libembed-amd", "@jupyter-widgets/base", ...); each
 *    takes webpack's public path (where its font files are) from require.js's module.uri, which
 *    without a `paths` entry is the PAGE's folder plus the module name, e.g.
 *    book/@jupyter-widgets/html-manager/dist/, where nothing is. Mapping the names to the
 *    html-manager/ folder beside this file makes the bundle load its icon fonts (Font Awesome)
 *    from _static/html-manager/, where they are vendored.
 *
 * 2. Gives MathJax 3 the one MathJax 2 call the bundle makes, when a widget shows a label or
 *    description: MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]). Hub.Queue forwards to
 *    MathJax 3's typesetPromise, chained on MathJax.startup.promise as the MathJax 3 docs advise.
 *    MathJax 3 replaces window.MathJax when its (deferred) script runs, so Hub is put on that
 *    object as it is assigned, not once now.
 */
(function () {
  "use strict";

  // ---- 1. where the bundle's files are -------------------------------------------------
  var here = document.currentScript && document.currentScript.src;
  if (here && window.require && window.require.config) {
    // _static/html-manager, without a trailing slash: require.js adds "/<rest of the name>".
    var manager = new URL("html-manager", here).href;
    window.require.config({
      paths: {
        "@jupyter-widgets": manager,
        "@jupyter-widgets/html-manager/dist": manager,
        // the book's widgets are anywidgets: book/_ext/site_assets.py copies the installed
        // anywidget's AMD module here at build time (without this, the manager would ask a CDN)
        "anywidget": new URL("anywidget/index", here).href
      }
    });
  }

  // ---- 2. MathJax.Hub.Queue for MathJax 3 ----------------------------------------------
  var waiting = [];          // elements queued before MathJax 3 has started (null: whole page)

  function typeset(elements) {
    var mathjax = window.MathJax;
    var startup = mathjax && mathjax.startup;
    if (!startup || !startup.promise) {
      waiting.push.apply(waiting, elements);
      return;
    }
    var whole = elements.indexOf(null) >= 0;
    startup.promise = startup.promise
      .then(function () {
        return mathjax.typesetPromise(whole ? undefined : elements);
      })
      .catch(function (error) {
        console.warn("MathJax could not typeset a widget: " + (error && error.message));
      });
  }

  var hub = {
    // MathJax 2 queue entries: ["Typeset", MathJax.Hub, element?] or a function to call after.
    Queue: function () {
      var elements = [];
      var after = [];
      Array.prototype.forEach.call(arguments, function (entry) {
        if (Array.isArray(entry) && entry[0] === "Typeset") {
          elements.push(entry[2] || null);
        } else if (typeof entry === "function") {
          after.push(entry);
        }
      });
      if (elements.length) {
        typeset(elements);
      }
      after.forEach(function (callback) {
        var startup = window.MathJax && window.MathJax.startup;
        (startup && startup.promise ? startup.promise : Promise.resolve()).then(callback);
      });
    }
  };

  // Non-enumerable: MathJax 3 reads its configuration with Object.keys, so a Hub on the
  // configuration object is never taken for an option.
  function withHub(mathjax) {
    if (mathjax && typeof mathjax === "object" && !mathjax.Hub) {
      Object.defineProperty(mathjax, "Hub", {value: hub, configurable: true, writable: true});
    }
    return mathjax;
  }

  var current = withHub(window.MathJax || {});
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) {
      current = withHub(value);
      if (value && value.version && waiting.length) {
        // MathJax 3 has just replaced its configuration; its startup object is made in the
        // same script, so look again once that script has finished.
        setTimeout(function () {
          var queued = waiting.splice(0);
          typeset(queued);
        }, 0);
      }
    }
  });
})();
