//go:build linux

package tests

// The one script every corpus page gets in live mode (TestCorpusSignIn): what a single-page
// site's sign-in does. The corpus pages were captured with their scripts stripped; a real site
// runs a script that takes the submit, sends the fields itself and moves on. The script is the
// same for every page, never tailored to one:
//
//   - the submit control is the element with data-manual-submit (the corpus's mark of the
//     control a person clicks) when the page has one, else a control a site's script would
//     answer: a <button> of any type, an <input type=submit|image|button>, a role=button, a
//     link that goes nowhere by itself (href="#…", javascript:, none) — a single-page site's
//     sign-in button is often one of those;
//   - a click on it (or on an element of a form with an onclick of its own, holding no field
//     and no other control: a <div> the site's script made its Sign in), Enter in an input,
//     or a form's submit event is taken: preventDefault, and
//     the fields are collected: the form's, or, outside a form, those of the control's (or the
//     input's) region, its highest ancestor holding no other submit control (or, when that
//     holds no field, the nearest ancestor that does): every input,
//     select and textarea (by name, else id, else "#" and its index among the document's),
//     checkboxes and radios when checked, buttons, files and disabled fields left out;
//   - they are POSTed as JSON with fetch to the page's own origin (/__corpus/submit, the
//     collected inputs' document indexes in the query so the server can tell which fields they
//     were); the answer names the next page (signed in, or the password step of a two-step
//     sign-in) and the script goes there, or it says the sign-in failed and the script shows
//     that in a role=alert;
//   - disabled buttons are enabled as fields fill (sites keep Sign in disabled until then):
//     those of the nearest ancestor of the field (within its form) that holds one.

// corpusLiveScript is appended to every page in live mode.
const corpusLiveScript = `<script>
(function () {
  "use strict";
  var SUBMIT = "button:not([type=reset]), input[type=submit], input[type=image], input[type=button], [role=button], a[href^='#'], a[href^='javascript:'], a:not([href])";
  var TYPED = "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset]):not([type=image]):not([type=checkbox]):not([type=radio]):not([type=file]), textarea, select";
  var DISABLED = "button[disabled], input[disabled][type=submit], input[disabled][type=image], input[disabled][type=button], [aria-disabled=true]";
  function marked() { return document.querySelectorAll("[data-manual-submit]"); }
  function controls() { return marked().length ? marked() : document.querySelectorAll(SUBMIT); }
  function control(t) {
    if (!t || !t.closest) return null;
    return marked().length ? t.closest("[data-manual-submit]") : t.closest(SUBMIT);
  }
  // region: the highest ancestor of el holding at most one submit control (an outermost
  // one: a marked wrapper and its button are one control).
  function region(el) {
    var all = Array.prototype.slice.call(controls());
    all = all.filter(function (c) { return !all.some(function (d) { return d !== c && d.contains(c); }); });
    var r = el;
    for (var n = el.parentElement; n; n = n.parentElement) {
      if (all.filter(function (c) { return n.contains(c); }).length > 1) break;
      r = n;
    }
    return r;
  }
  // scope: the form, else the control's region, else (a region with no field: another
  // control right beside this one, a form the parser closed before its table's fields) the
  // nearest ancestor holding a field: a site's own script knows its fields, whatever the layout.
  function scope(el) {
    var s = el.form || (el.closest && el.closest("form"));
    if (s) return s; // its fields are the form's, wherever form= puts them
    s = region(el);
    for (var n = s; n && !hasField(n); n = n.parentElement) s = n.parentElement;
    return s || document.body;
  }
  // hasField: el holds a field to fill (a text input styled as a button is a control).
  function hasField(el) {
    return Array.prototype.some.call(el.querySelectorAll(TYPED), function (f) { return !control(f); });
  }
  // handler: an element with a click handler of its own inside a form, holding no field and
  // no other control (the snapshot's rule for a button made of a <div>): a site's Sign in.
  function handler(t) {
    var h = t.closest && t.closest("[onclick]");
    if (!h || h.tagName === "FORM" || !h.closest("form") || h.matches("input, select, textarea, label, option, a[href]")) return null;
    return hasField(h) || h.querySelector(SUBMIT) ? null : h;
  }
  // enabler: the nearest ancestor of a field (in its form) holding a disabled control.
  function enabler(t) {
    var stop = t.form || t.closest("form");
    for (var n = t.parentElement; n; n = n.parentElement) {
      if (n.querySelector(DISABLED) || n === stop) return n;
    }
    return document.body;
  }
  function fields(root) {
    var list = root.tagName === "FORM" ? root.elements : root.querySelectorAll("input, select, textarea");
    var every = Array.prototype.slice.call(document.querySelectorAll("input, select, textarea"));
    var data = {}, idx = [];
    Array.prototype.forEach.call(list, function (f) {
      var i = every.indexOf(f), key = f.name || f.id || "#" + i, type = (f.type || "").toLowerCase();
      if (f.disabled || /^(submit|button|reset|image|file)$/.test(type) || f.tagName === "BUTTON" || f.tagName === "FIELDSET" || f.tagName === "OUTPUT") return;
      if ((type === "checkbox" || type === "radio") && !f.checked) return;
      if (!(key in data) || data[key] === "") data[key] = f.value;
      idx.push(i);
    });
    return {data: data, idx: idx};
  }
  var busy = false;
  function send(root) {
    if (busy) return;
    busy = true;
    var got = fields(root);
    fetch("/__corpus/submit?i=" + got.idx.join(","), {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify(got.data)})
    .then(function (r) { return r.json(); })
    .then(function (j) {
      if (j.next) { location.assign(j.next); return; }
      busy = false;
      var p = document.createElement("p");
      p.setAttribute("role", "alert");
      p.textContent = j.error || "Sign-in failed";
      document.body.insertBefore(p, document.body.firstChild);
    }, function () { busy = false; });
  }
  document.addEventListener("click", function (e) {
    var c = control(e.target) || handler(e.target);
    if (!c) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    send(scope(c));
  }, true);
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.key !== "Enter" || !t || t.tagName !== "INPUT") return;
    e.preventDefault();
    e.stopImmediatePropagation();
    send(scope(t));
  }, true);
  document.addEventListener("submit", function (e) {
    e.preventDefault();
    e.stopImmediatePropagation();
    send(e.target);
  }, true);
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (!t || !t.matches || !t.matches(TYPED)) return;
    Array.prototype.forEach.call(enabler(t).querySelectorAll(DISABLED), function (b) {
      b.removeAttribute("disabled");
      if (b.getAttribute("aria-disabled") === "true") b.setAttribute("aria-disabled", "false");
    });
  }, true);
})();
</script>`
