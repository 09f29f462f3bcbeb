// navbench report/index.html: renders the instances × variants table and, on demand,
// one instance's drill-down from the JSON blocks the page embeds (no framework, no
// network). Data: #nb-meta (variants, accuracy columns, issue texts, transcript ids),
// #nb-rows and #nb-calls (per run: the CSV's header and its records, variant already
// replaced by the report's label), #tr-N (one transcript's lines, parsed when opened).
"use strict";
(function () {
  var start = Date.now();
  var json = function (id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  };
  var meta = json("nb-meta");
  var esc = function (s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  };
  var num = function (s) {
    if (s === undefined || s === null || s === "") return NaN;
    var x = Number(s);
    return isNaN(x) ? NaN : x;
  };
  var list = function (s) { return s ? String(s).split(";").filter(function (x) { return x !== ""; }) : []; };
  // A pair's key; a trial after the first (`run --repeats`) adds its number.
  var key = function (inst, variant, trial) {
    return inst + "\u0001" + variant + (num(trial) > 1 ? "\u0001" + trial : "");
  };

  // Rows: objects keyed by column name; a later record of the same pair wins (a
  // retried pair, or the same pair in two runs, which the labels already tell apart).
  var rows = [];
  var byKey = {};
  (json("nb-rows") || []).forEach(function (run, ri) {
    run.rows.forEach(function (rec) {
      var r = { _run: ri };
      run.cols.forEach(function (c, i) { r[c] = rec[i]; });
      var k = key(r.instance_id, r.variant, r.trial);
      if (byKey[k] !== undefined) rows[byKey[k]] = r; else { byKey[k] = rows.length; rows.push(r); }
    });
  });
  var perInstance = {};
  // The drill-down shows each variant's first trial.
  rows.forEach(function (r) { if (!(num(r.trial) > 1)) (perInstance[r.instance_id] = perInstance[r.instance_id] || {})[r.variant] = r; });
  var hasTrials = rows.some(function (r) { return num(r.trial) > 1; });
  var variants = meta.variants;
  var accCols = meta.acc.filter(function (c) { return rows.some(function (r) { return c in r; }); });
  var hasAgent = rows.some(function (r) { return r.stop_reason; });

  // Hit at a glance: file Acc@1, else Acc@5, else a miss; grey when not scored.
  var glanceClass = function (r) {
    if (!r || r.file_acc_1 === undefined || r.file_acc_1 === "") return "gx";
    if (num(r.file_acc_1) >= 1) return "g1";
    if (num(r.file_acc_5) >= 1) return "g5";
    return "g0";
  };
  var glance = function (r) {
    var by = perInstance[r.instance_id];
    return '<span class="glance">' + variants.map(function (v) {
      return '<span class="' + glanceClass(by[v]) + (v === r.variant ? " me" : "") + '" title="' + esc(v) + '"></span>';
    }).join("") + "</span>";
  };

  var columns = [
    { id: "instance_id", label: "instance", text: true },
    { id: "repo", label: "repository", text: true },
    { id: "variant", label: "variant", text: true },
    hasTrials ? { id: "trial", label: "trial" } : null,
    { id: "status", label: "status", text: true },
    { id: "_glance", label: "hits (all variants)", value: function (r) { return ["gx", "g0", "g5", "g1"].indexOf(glanceClass(r)); } }
  ].concat(accCols.map(function (c) {
    // Short headers, as the run's printed table has them (file@1, mod@10, fn@5).
    var short = c.replace("file_acc_", "file@").replace("module_acc_", "mod@").replace("function_acc_", "fn@");
    return { id: c, label: short, title: meta.pretty[c] || c, acc: true };
  }))
    .concat([
      { id: "response_tokens", label: "tool tokens" },
      hasAgent ? { id: "_llm_tokens", label: "LLM tokens", value: function (r) { return num(r.prompt_tokens) + num(r.completion_tokens); } } : null,
      { id: "n_calls", label: "calls" },
      { id: "wall_ms", label: "time (s)", value: function (r) { return num(r.wall_ms) / 1000; }, digits: 1 }
    ]).filter(Boolean);
  var valueOf = function (c, r) { return c.value ? c.value(r) : (c.text ? r[c.id] || "" : num(r[c.id])); };

  var state = { sort: null, desc: false, limit: 500 };
  var filtered = rows;
  var $ = function (id) { return document.getElementById(id); };

  var head = function () {
    $("grid").tHead.innerHTML = "<tr>" + columns.map(function (c, i) {
      var cls = (c.text ? "" : "num") + (state.sort === i ? (state.desc ? " sorted-desc" : " sorted-asc") : "");
      return '<th data-col="' + i + '" class="' + cls + '" title="' + esc(c.title || c.label) + '">' + esc(c.label) + "</th>";
    }).join("") + "</tr>";
  };
  var cell = function (c, r) {
    if (c.id === "instance_id") return '<td><a href="#open=' + encodeURIComponent(r.instance_id) + '">' + esc(r.instance_id) + "</a></td>";
    if (c.id === "_glance") return "<td>" + glance(r) + "</td>";
    if (c.id === "status") return '<td class="status-' + esc(r.status) + '" title="' + esc(r.error || "") + '">' + esc(r.status) + "</td>";
    if (c.text) return "<td>" + esc(r[c.id]) + "</td>";
    var v = valueOf(c, r);
    if (isNaN(v)) return '<td class="num na">–</td>';
    if (c.acc) return '<td class="num ' + (v >= 1 ? "hit" : "miss") + '">' + (v >= 1 ? "1" : v > 0 ? v.toFixed(2) : "0") + "</td>";
    return '<td class="num">' + (c.digits ? v.toFixed(c.digits) : Math.round(v)) + "</td>";
  };
  var body = function () {
    var shown = filtered.slice(0, state.limit);
    $("grid").tBodies[0].innerHTML = shown.map(function (r) {
      return '<tr data-instance="' + esc(r.instance_id) + '" data-variant="' + esc(r.variant) + '">' + columns.map(function (c) { return cell(c, r); }).join("") + "</tr>";
    }).join("");
    $("count").textContent = filtered.length + " of " + rows.length + " rows";
    $("more").innerHTML = filtered.length > shown.length
      ? '<button id="show-more">show ' + Math.min(2000, filtered.length - shown.length) + " more of " + (filtered.length - shown.length) + "</button>" : "";
  };
  var apply = function () {
    var q = $("q").value.toLowerCase(), v = $("fv").value, s = $("fs").value, miss = $("fm").checked;
    filtered = rows.filter(function (r) {
      if (v && r.variant !== v) return false;
      if (s && r.status !== s) return false;
      if (miss && !(num(r.file_acc_1) < 1)) return false;
      if (q && (r.instance_id + " " + r.repo + " " + r.variant + " " + r.status).toLowerCase().indexOf(q) < 0) return false;
      return true;
    });
    if (state.sort !== null) {
      var c = columns[state.sort], dir = state.desc ? -1 : 1;
      filtered = filtered.map(function (r, i) { return [valueOf(c, r), i, r]; }).sort(function (a, b) {
        var x = a[0], y = b[0];
        if (typeof x === "number" && isNaN(x)) x = -Infinity;
        if (typeof y === "number" && isNaN(y)) y = -Infinity;
        return (x < y ? -1 : x > y ? 1 : a[1] - b[1]) * dir;
      }).map(function (t) { return t[2]; });
    }
    state.limit = 500;
    head();
    body();
  };

  var options = function (id, values) {
    $(id).innerHTML += values.map(function (v) { return '<option value="' + esc(v) + '">' + esc(v) + "</option>"; }).join("");
  };
  options("fv", variants);
  options("fs", Object.keys(rows.reduce(function (m, r) { m[r.status] = 1; return m; }, {})).sort());
  $("legend").innerHTML = "hits: " + variants.map(function (v) { return esc(v); }).join(", ") +
    ' <span class="glance"><span class="g1"></span>file Acc@1 <span class="g5"></span>Acc@5 only <span class="g0"></span>miss <span class="gx"></span>not scored</span>';
  ["q", "fv", "fs", "fm"].forEach(function (id) { $(id).addEventListener("input", apply); $(id).addEventListener("change", apply); });
  $("grid").tHead.addEventListener("click", function (e) {
    var th = e.target.closest("th");
    if (!th) return;
    var i = Number(th.getAttribute("data-col"));
    state.desc = state.sort === i ? !state.desc : !columns[i].text;
    state.sort = i;
    apply();
  });
  $("more").addEventListener("click", function (e) {
    if (e.target.id === "show-more") { state.limit += 2000; body(); }
  });

  // Calls: parsed on the first drill-down, grouped by pair, in step order.
  var callsByKey = null;
  var calls = function (inst, variant) {
    if (!callsByKey) {
      callsByKey = {};
      (json("nb-calls") || []).forEach(function (run) {
        run.rows.forEach(function (rec) {
          var c = {};
          run.cols.forEach(function (col, i) { c[col] = rec[i]; });
          var k = key(c.instance_id, c.variant, c.trial);
          (callsByKey[k] = callsByKey[k] || []).push(c);
        });
      });
      Object.keys(callsByKey).forEach(function (k) { callsByKey[k].sort(function (a, b) { return num(a.step) - num(b.step); }); });
    }
    return callsByKey[key(inst, variant)] || [];
  };
  var transcript = function (inst, variant) {
    var id = meta.transcripts[key(inst, variant)];
    return id === undefined ? null : json("tr-" + id);
  };

  var goldOf = function (r) {
    var functions = list(r.gold_functions), modules = [];
    functions.forEach(function (f) {
      var at = f.indexOf(":");
      if (at < 0) return;
      var m = f.slice(0, at + 1) + f.slice(at + 1).split(".")[0];
      if (modules.indexOf(m) < 0) modules.push(m);
    });
    return { files: list(r.gold_files), modules: modules, functions: functions };
  };
  var ranked = function (items, gold) {
    if (!items.length) return '<p class="na">none</p>';
    return '<ol class="pred">' + items.map(function (p) {
      var hit = gold.indexOf(p) >= 0;
      return '<li class="' + (hit ? "hit" : "") + '">' + (hit ? "✓ " : "") + "<code>" + esc(p) + "</code></li>";
    }).join("") + "</ol>";
  };
  var known = ["instance_id", "repo", "variant", "status", "error", "gold_files", "gold_functions", "pred_files", "pred_modules", "pred_functions", "warnings", "_run"];
  var extras = function (r) {
    var ks = Object.keys(r).filter(function (k) { return known.indexOf(k) < 0 && accCols.indexOf(k) < 0 && r[k] !== "" && r[k] !== undefined; });
    return "<details><summary>all columns (" + ks.length + ")</summary><table>" + ks.map(function (k) {
      return "<tr><th>" + esc(k) + "</th><td>" + esc(r[k]) + "</td></tr>";
    }).join("") + "</table></details>";
  };
  var callTable = function (cs) {
    if (!cs.length) return '<p class="na">no tool calls</p>';
    return "<table class=\"calls\"><tr><th>#</th><th>tool</th><th>arguments</th><th class=num>ms</th><th class=num>tokens</th><th>error</th></tr>" + cs.map(function (c) {
      return "<tr><td class=num>" + esc(c.step) + "</td><td>" + esc(c.tool) + "</td><td><code>" + esc(c.args) + "</code></td><td class=num>" +
        esc(isNaN(num(c.latency_ms)) ? "" : num(c.latency_ms).toFixed(1)) + "</td><td class=num>" + esc(c.response_tokens) + "</td><td class=err-text>" +
        (c.is_error === "true" ? esc(c.error || "error") : "") + "</td></tr>";
    }).join("") + "</table>";
  };
  var usageText = function (u) {
    if (!u) return "";
    return Object.keys(u).map(function (k) { return k + " " + (typeof u[k] === "object" ? JSON.stringify(u[k]) : u[k]); }).join(", ");
  };
  var line = function (l) {
    var role = l.role;
    if (role === "tools") {
      return '<details class="turn sys"><summary>' + (l.tools || []).length + " tools offered</summary><pre>" + esc(JSON.stringify(l.tools, null, 1)) + "</pre></details>";
    }
    if (role === "system" || role === "user") {
      return '<details class="turn sys"' + (role === "user" ? " open" : "") + "><summary>" + role + " prompt</summary><pre>" + esc(l.content) + "</pre></details>";
    }
    if (role === "assistant") {
      var m = l.message || {}, tc = m.tool_calls || [];
      return '<div class="turn asst"><b>model turn ' + esc(l.turn) + '</b> <span class="meta">' + esc(usageText(l.usage)) +
        (l.llm_ms !== undefined ? ", " + Math.round(l.llm_ms) + " ms" : "") + (l.cached ? ", from cache" : "") +
        (l.finish_reason ? ", finish " + esc(l.finish_reason) : "") + "</span>" +
        (m.reasoning_content ? "<details><summary>reasoning</summary><pre>" + esc(m.reasoning_content) + "</pre></details>" : "") +
        (m.content ? "<pre>" + esc(m.content) + "</pre>" : "") +
        (tc.length ? "<ul>" + tc.map(function (c) {
          var f = c.function || {};
          return "<li>calls <b>" + esc(f.name) + "</b> <code>" + esc(typeof f.arguments === "string" ? f.arguments : JSON.stringify(f.arguments)) + "</code></li>";
        }).join("") + "</ul>" : "") + "</div>";
    }
    if (role === "tool") {
      var content = String(l.content == null ? "" : l.content);
      return '<div class="turn tool' + (l.is_error ? " err" : "") + '"><b>tool ' + esc(l.name) + "</b> <code>" + esc(l.arguments) + '</code> <span class="meta">' +
        (l.latency_ms !== undefined ? Math.round(l.latency_ms) + " ms" : "") + (l.is_error ? ", error" : "") + (l.cut ? ", cut to the result budget" : "") + "</span>" +
        "<details" + (content.length < 600 ? " open" : "") + "><summary>result as the model read it (" + content.length + " chars)</summary><pre>" + esc(content) + "</pre></details></div>";
    }
    if (role === "navbench" && l.answer !== undefined) {
      return '<div class="turn nav"><b>final answer</b><pre>' + esc(l.answer) + "</pre>parsed as: " +
        ((l.parsed || []).length ? "<ol>" + l.parsed.map(function (p) { return "<li><code>" + esc(p) + "</code></li>"; }).join("") + "</ol>" : '<span class="err-text">no location</span>') +
        Object.keys(l).filter(function (k) { return ["role", "answer", "parsed"].indexOf(k) < 0; }).map(function (k) {
          return '<div class="meta">' + esc(k) + ": " + esc(JSON.stringify(l[k])) + "</div>";
        }).join("") + "</div>";
    }
    if (role === "navbench" && l.stop_reason !== undefined) {
      return '<div class="turn nav"><b>stop: ' + esc(l.stop_reason) + '</b> <span class="meta">' + esc(Object.keys(l).filter(function (k) { return k !== "role" && k !== "stop_reason"; }).map(function (k) { return k + " " + JSON.stringify(l[k]); }).join(", ")) + "</span></div>";
    }
    if (role === "navbench" && l.error !== undefined) {
      return '<div class="turn tool err"><b>model call failed (turn ' + esc(l.turn) + ')</b><pre class="err-text">' + esc(l.error) + "</pre></div>";
    }
    return '<div class="turn"><pre>' + esc(JSON.stringify(l, null, 1)) + "</pre></div>";
  };
  var issueFrom = function (id) {
    if (meta.issues[id] !== undefined) return meta.issues[id];
    var vs = Object.keys(perInstance[id] || {});
    for (var i = 0; i < vs.length; i++) {
      var t = transcript(id, vs[i]);
      var u = t && t.filter(function (l) { return l.role === "user"; })[0];
      if (u) return "(from the agent's task prompt)\n" + u.content;
    }
    return null;
  };

  var open = function (id) {
    var by = perInstance[id];
    var d = $("detail");
    if (!by) { d.hidden = false; d.innerHTML = "<p>No instance " + esc(id) + " in this report.</p>"; return; }
    var vs = variants.filter(function (v) { return by[v]; });
    var first = by[vs[0]], gold = goldOf(first), issue = issueFrom(id);
    var h = '<a class="close" href="#close">close ✕</a><h2>' + esc(id) + ' <span class="meta">' + esc(first.repo) + "</span></h2>";
    h += "<h3>Issue</h3>" + (issue === null ? '<p class="na">The issue text is not in the run directory: pass <code>--dataset</code> to <code>navbench report</code>.</p>' : "<pre>" + esc(issue) + "</pre>");
    h += '<h3>Gold and predictions</h3><div class="cols"><div class="col gold"><h4>gold</h4>' +
      ["files", "modules", "functions"].map(function (lv) {
        return "<b>" + lv + "</b>" + (gold[lv].length ? '<ul class="gold">' + gold[lv].map(function (g) { return "<li><code>" + esc(g) + "</code></li>"; }).join("") + "</ul>" : '<p class="na">none</p>');
      }).join("") + "</div>";
    h += vs.map(function (v) {
      var r = by[v], g = goldOf(r);
      return '<div class="col variant" data-variant="' + esc(v) + '"><h4>' + esc(v) + ' <span class="status-' + esc(r.status) + '">' + esc(r.status) + "</span></h4>" +
        (r.error ? '<pre class="err-text">' + esc(r.error) + "</pre>" : "") +
        (r.warnings ? '<p class="meta">warnings: ' + esc(r.warnings) + "</p>" : "") +
        "<b>files</b>" + ranked(list(r.pred_files), g.files) + "<b>modules</b>" + ranked(list(r.pred_modules), g.modules) +
        "<b>functions</b>" + ranked(list(r.pred_functions), g.functions) + extras(r) + "</div>";
    }).join("") + "</div>";
    h += vs.map(function (v) {
      var cs = calls(id, v), t = transcript(id, v);
      return '<section class="pair" data-variant="' + esc(v) + '"><h3>' + esc(v) + ": " + cs.length + " tool call(s)</h3>" + callTable(cs) +
        (t ? '<details class="transcript" open><summary>transcript (' + t.length + " lines)</summary>" + t.map(line).join("") + "</details>" : "") + "</section>";
    }).join("");
    d.innerHTML = h;
    d.hidden = false;
    d.setAttribute("data-instance", id);
    d.scrollTop = 0;
  };
  // `#instances` shows the table alone (the summary folded away), `#summary` or no
  // hash the whole page, `#open=<instance>` a drill-down over either.
  var route = function () {
    if (!/^#open=/.test(location.hash)) $("summary").hidden = location.hash === "#instances";
    var m = /^#open=(.*)$/.exec(location.hash);
    if (m) open(decodeURIComponent(m[1]));
    else $("detail").hidden = true;
  };
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && !$("detail").hidden) location.hash = "#close"; });
  var t0 = Date.now();
  apply();
  document.body.setAttribute("data-table-ms", Date.now() - t0);
  t0 = Date.now();
  route();
  document.body.setAttribute("data-open-ms", Date.now() - t0);
  document.body.setAttribute("data-rendered", rows.length);
  document.body.setAttribute("data-script-ms", Date.now() - start);
})();
