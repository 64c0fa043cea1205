/// The status page at `/`: plain HTML, CSS and JavaScript in the binary, no request to
/// any other host. It reads `/v1/...` with the API key the person types (kept for the
/// browser tab only) and stays live through `/v1/events`, read with `fetch` so that the
/// key can go in a header (an `EventSource` cannot send one).
enum StatusPage {
    static let html = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta http-equiv="Content-Security-Policy" content="default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self' data:">
    <title>Ferry</title>
    <style>
    \(style)
    </style>
    </head>
    <body>
    <header>
      <h1>Ferry</h1>
      <span id="daemon" class="muted">connecting…</span>
      <span id="live" class="pill" title="live updates">offline</span>
      <span id="access" class="pill" title="this key may look, not act" hidden>read only</span>
      <span class="spacer"></span>
      <button id="pause-all" type="button">Pause all</button>
      <button id="resume-all" type="button">Resume all</button>
    </header>
    <main>
      <form id="login" hidden>
        <h2>API key</h2>
        <p>This daemon asks for its key (in <code>api-key</code> in its state folder).</p>
        <label for="key">Key</label>
        <input id="key" type="password" autocomplete="current-password" required>
        <button type="submit">Open</button>
        <p id="login-error" class="error" role="alert"></p>
      </form>
      <div id="message" role="status" aria-live="polite"></div>
      <section id="folders" aria-label="Folders"></section>
      <section id="history" aria-labelledby="history-title">
        <h2 id="history-title">Last 24 hours</h2>
        <div id="chart" role="img" aria-label="Bytes sent and received per hour over the last day"></div>
        <p class="axis"><span>24 h ago</span><span>12 h ago</span><span>now</span></p>
        <p class="legend"><span class="swatch up"></span> sent <span class="swatch down"></span> received</p>
      </section>
    </main>
    <script>
    \(script)
    </script>
    </body>
    </html>
    """

    static let style = """
    :root { --fg: #1d2430; --muted: #5b6575; --bg: #f5f6f8; --card: #fff; --line: #d8dce3; --accent: #1f6feb;
            --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --up: #1f6feb; --down: #8250df; }
    * { box-sizing: border-box; }
    [hidden] { display: none !important; }
    body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
    header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem .75rem; padding: .6rem 1rem; background: var(--card);
             border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
    header h1 { font-size: 1.2rem; margin: 0; }
    .spacer { flex: 1; }
    main { max-width: 72rem; margin: 0 auto; padding: 1rem; display: grid; gap: 1rem; }
    h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
    h3 { font-size: .95rem; margin: .75rem 0 .35rem; }
    .muted { color: var(--muted); }
    .pill { font-size: .8rem; padding: .1rem .5rem; border-radius: 1rem; background: #eee; color: var(--muted); }
    .pill.on { background: #dafbe1; color: var(--ok); }
    button { font: inherit; padding: .35rem .75rem; border: 1px solid var(--line); border-radius: .4rem; background: #fff;
             color: var(--fg); cursor: pointer; min-height: 2.25rem; }
    button:hover { border-color: var(--accent); }
    button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
    button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
    body.read-only .actions, body.read-only .row, body.read-only #pause-all, body.read-only #resume-all { display: none; }
    button:disabled { opacity: .5; cursor: default; }
    input { font: inherit; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: .4rem; width: 100%; max-width: 28rem; }
    form#login { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; padding: 1rem; display: grid; gap: .5rem; max-width: 32rem; }
    .error { color: var(--bad); }
    #folders { display: grid; gap: 1rem; align-items: start; grid-template-columns: repeat(auto-fill, minmax(min(100%, 30rem), 1fr)); }
    .folder { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; padding: .9rem; min-width: 0; }
    .folder .title { display: flex; flex-wrap: wrap; gap: .25rem .6rem; align-items: baseline; }
    .folder .title h2 { margin: 0; }
    .where { color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
    .banner { margin: .6rem 0 0; padding: .45rem .6rem; border-radius: .4rem; font-size: .9rem; overflow-wrap: anywhere; }
    .banner.paused { background: #fff8c5; color: var(--warn); }
    .banner.offline { background: #ffebe9; color: var(--bad); }
    .hold { margin: .6rem 0 0; padding: .45rem .6rem; border-radius: .4rem; background: #ffebe9; color: var(--bad); font-size: .9rem; overflow-wrap: anywhere; }
    .hold .actions { margin-top: .4rem; }
    details.browse { margin-top: .6rem; }
    details.browse summary { cursor: pointer; font-weight: 600; }
    details.browse .browse-note { margin: .3rem 0; font-size: .85rem; }
    .state { margin: .5rem 0; font-size: .9rem; }
    .queue { display: grid; grid-template-columns: 6.5rem 1fr; gap: .15rem .6rem; align-items: center; margin: .3rem 0; font-size: .85rem; }
    .queue .name { font-weight: 600; }
    .bar { height: .6rem; background: #e8ebef; border-radius: .3rem; overflow: hidden; }
    .bar > span { display: block; height: 100%; background: var(--accent); width: 0; transition: width .4s; }
    .queue .numbers { grid-column: 2; color: var(--muted); font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
    .actions { display: flex; flex-wrap: wrap; gap: .4rem; margin-top: .6rem; }
    ul.files { list-style: none; margin: 0; padding: 0; display: grid; gap: .4rem; }
    ul.files li { border-top: 1px solid var(--line); padding-top: .4rem; display: grid; gap: .3rem; }
    .path { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; overflow-wrap: anywhere; }
    .why { color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
    .row { display: flex; flex-wrap: wrap; gap: .4rem; }
    #history { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; padding: .9rem; }
    #chart svg { width: 100%; height: 9rem; display: block; }
    .legend { font-size: .8rem; color: var(--muted); margin: .3rem 0 0; }
    .axis { display: flex; justify-content: space-between; font-size: .75rem; color: var(--muted); margin: .1rem 0 0; }
    .swatch { display: inline-block; width: .7rem; height: .7rem; border-radius: .15rem; vertical-align: -1px; }
    .swatch.up { background: var(--up); } .swatch.down { background: var(--down); }
    @media (max-width: 30rem) { main { padding: .6rem; } .queue { grid-template-columns: 5.5rem 1fr; } header h1 { font-size: 1.05rem; } }
    """

    static let script = #"""
    "use strict";
    const state = { key: sessionStorage.getItem("ferry-key") || "", folders: {}, lists: {}, lastEventId: null, stream: null };

    function el(tag, attrs, ...children) {
      const node = document.createElement(tag);
      for (const [name, value] of Object.entries(attrs || {})) {
        if (name === "text") node.textContent = value;
        else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
        else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value === true ? "" : value);
      }
      for (const child of children) if (child) node.append(child);
      return node;
    }
    // Binary units and three significant digits, as the ferry command shows sizes.
    function bytes(n) {
      if (!n) return "0 B";
      const units = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0;
      while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
      return (i ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) : Math.round(n)) + " " + units[i];
    }
    function duration(s) {
      if (s === null || s === undefined) return "";
      s = Math.round(s);
      if (s < 60) return s + " s";
      if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
      return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
    }
    // "2026-12-05 08:40:12 +0100": 24 hours and the zone, as the ferry command shows times.
    function when(iso) {
      if (!iso) return "";
      const t = new Date(iso), two = (n) => String(n).padStart(2, "0");
      const offset = -t.getTimezoneOffset(), sign = offset < 0 ? "-" : "+", abs = Math.abs(offset);
      return t.getFullYear() + "-" + two(t.getMonth() + 1) + "-" + two(t.getDate()) + " " + two(t.getHours()) + ":"
        + two(t.getMinutes()) + ":" + two(t.getSeconds()) + " " + sign + two(Math.floor(abs / 60)) + two(abs % 60);
    }
    // Why a run is under way, in words: "start" is the daemon's first run of the folder.
    function why(reason) {
      const words = { start: "first run since the daemon started", watch: "files settled", poll: "checking the remote",
                      rescan: "rescan", retry: "retrying failed files" };
      return reason.split(", ").map((part) => part.startsWith("schedule") ? "scheduled" + part.slice("schedule".length)
        : part.startsWith("api") ? "asked for" + part.slice("api".length) : (words[part] || part)).join(", ");
    }
    function say(text, bad) { const m = document.getElementById("message"); m.textContent = text; m.className = bad ? "error" : "muted"; }

    async function api(method, path, body) {
      const headers = { "Accept": "application/json" };
      if (state.key) headers["X-API-Key"] = state.key;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (response.status === 401) { askForKey(); throw new Error("the API key is needed"); }
      const data = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
      return data;
    }

    function askForKey(message) {
      const form = document.getElementById("login");
      form.hidden = false;
      document.getElementById("login-error").textContent = message || (state.key ? "That key was refused." : "");
      document.getElementById("key").focus();
    }
    document.getElementById("login").addEventListener("submit", (event) => {
      event.preventDefault();
      state.key = document.getElementById("key").value.trim();
      sessionStorage.setItem("ferry-key", state.key);
      document.getElementById("login").hidden = true;
      start();
    });

    async function act(button, method, path, body, done) {
      button.disabled = true;
      try { const result = await api(method, path, body); say(done ? done(result) : "done"); refreshLists(); }
      catch (error) { say(error.message, true); }
      finally { button.disabled = false; }
    }

    function folderCard(f) {
      const parts = {};
      const card = el("article", { class: "folder", id: "folder-" + f.name, "aria-labelledby": "title-" + f.name });
      parts.title = el("h2", { id: "title-" + f.name, text: f.name });
      parts.mode = el("span", { class: "pill" });
      parts.where = el("div", { class: "where" });
      parts.banner = el("p", { class: "banner", hidden: true });
      parts.state = el("p", { class: "state", "aria-live": "polite" });
      parts.queues = el("div", { class: "queues" });
      parts.pause = el("button", { type: "button", "data-focus": "pause-" + f.name, onclick: (e) => {
        const paused = state.folders[f.name] && state.folders[f.name].paused;
        act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(f.name) + (paused ? "/resume" : "/pause"), undefined,
            () => f.name + (paused ? " resumed" : " paused"));
      } });
      const run = el("button", { type: "button", class: "primary", onclick: (e) =>
        act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(f.name) + "/run", {}, () => f.name + ": run asked for") }, "Run now");
      const rescan = el("button", { type: "button", onclick: (e) =>
        act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(f.name) + "/rescan", {}, () => f.name + ": rescan asked for") }, "Rescan");
      // A run held before its first write: what it saw, and the one way on (a control key).
      parts.holdText = el("p", { class: "hold-text" });
      parts.hold = el("section", { class: "hold", role: "alert", hidden: true, "aria-label": "Hold on " + f.name }, parts.holdText,
        el("div", { class: "actions" }, el("button", { type: "button", "data-focus": "accept-" + f.name, onclick: (e) =>
          act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(f.name) + "/accept-changes", {},
              () => f.name + ": changes accepted, the run goes on") }, "Accept changes")));
      parts.failed = el("section", { class: "failed", hidden: true, "aria-label": "Failed files of " + f.name });
      parts.conflicts = el("section", { class: "conflicts", hidden: true, "aria-label": "Conflicts of " + f.name });
      parts.browse = fileBrowser(f.name);
      card.append(el("div", { class: "title" }, parts.title, parts.mode), parts.where, parts.banner, parts.hold, parts.state, parts.queues,
                  el("div", { class: "actions" }, run, parts.pause, rescan), parts.failed, parts.conflicts, parts.browse.element);
      state.folders[f.name] = { parts, paused: false };
      return card;
    }

    // The folder's files as the journal knows them: no request reaches the remote, so the
    // list is there when the remote is offline too ("as of" the folder's last run).
    function fileBrowser(name) {
      const list = el("ul", { class: "files browse-list" });
      const note = el("p", { class: "muted browse-note" });
      const more = el("button", { type: "button", class: "more", hidden: true }, "More");
      const summary = el("summary", { text: "Files" });
      const element = el("details", { class: "browse", id: "files-" + name }, summary, note, list, more);
      let next = null;
      async function load(after) {
        const q = "/v1/files?folder=" + encodeURIComponent(name) + "&limit=50" + (after ? "&after=" + encodeURIComponent(after) : "");
        try {
          const page = await api("GET", q);
          if (!after) list.replaceChildren();
          for (const file of page.files) {
            list.append(el("li", {}, el("span", { class: "path", text: file.path }),
                           el("span", { class: "why", text: bytes(file.bytes) + ", " + file.status })));
          }
          next = page.next;
          more.hidden = !next;
          const folder = state.folders[name];
          note.textContent = (folder && folder.offline ? "The remote is offline: these are the files as of the last run"
            : "From the journal") + (folder && folder.lastRun ? " (" + when(folder.lastRun) + ")." : ".")
            + (page.files.length || after ? "" : " No file yet.");
        } catch (error) { note.textContent = error.message; }
      }
      element.addEventListener("toggle", () => { if (element.open) load(null); });
      more.addEventListener("click", () => { if (next) load(next); });
      return { element, refresh: () => { if (element.open) load(null); } };
    }

    function renderStatus(status) {
      const d = status.daemon;
      document.getElementById("daemon").textContent = d.command + " " + d.version + ", pid " + d.pid + ", since " + when(d.started_at);
      const container = document.getElementById("folders");
      for (const f of status.folders) {
        if (!state.folders[f.name]) container.append(folderCard(f));
        const entry = state.folders[f.name], p = entry.parts;
        entry.paused = f.paused;
        const cameBack = entry.offline && !f.offline;
        entry.offline = f.offline;
        entry.lastRun = f.last_run_ended_at;
        if (cameBack) p.browse.refresh();
        p.mode.textContent = f.mode;
        p.where.textContent = f.local + (f.mode === "pull" ? " ← " : f.mode === "sync" ? " ⇄ " : " → ") + f.remote;
        if (f.paused) { p.banner.hidden = false; p.banner.className = "banner paused"; p.banner.textContent = "Paused since " + when(f.paused_since) + " (" + (f.paused_reason || "paused") + "): nothing moves until it is resumed."; }
        else if (f.offline) { p.banner.hidden = false; p.banner.className = "banner offline";
          p.banner.textContent = "Remote offline since " + when(f.offline_since) + ": " + (f.offline_message || "no answer"); }
        else if (f.waiting_for) { p.banner.hidden = false; p.banner.className = "banner paused"; p.banner.textContent = "Waiting: " + f.waiting_for; }
        else p.banner.hidden = true;
        p.hold.hidden = !f.hold;
        if (f.hold) p.holdText.textContent = "Held since " + when(f.hold.since) + ": " + f.hold.message;
        p.pause.textContent = f.paused ? "Resume" : "Pause";
        let line = f.state === "running" ? "Running" + (f.reason ? " (" + why(f.reason) + ")" : "")
          : f.state === "idle" ? (f.waiting_for ? "Waiting for its run conditions" : "Idle") : f.state[0].toUpperCase() + f.state.slice(1);
        if (f.state === "running") {
          line += " · " + bytes(f.rate_bytes_per_second) + "/s";
          if (f.eta_seconds !== null) line += " · " + duration(f.eta_seconds) + " left";
        } else if (f.last_run_ended_at) line += " · last run " + when(f.last_run_ended_at);
        if (f.last_error) line += " · last run failed: " + f.last_error;
        if (f.failed_files) line += " · " + f.failed_files + " failed";
        if (f.conflict_files) line += " · " + f.conflict_files + " in conflict";
        p.state.textContent = line;
        renderQueues(p.queues, f);
        const listKey = f.failed_files + "/" + f.conflict_files;
        if (entry.listKey !== listKey) { entry.listKey = listKey; loadLists(f.name); }
      }
    }

    function renderQueues(container, f) {
      const seen = new Set();
      for (const q of f.queues) {
        seen.add(q.queue);
        let row = container.querySelector('[data-queue="' + q.queue + '"]');
        if (!row) {
          row = el("div", { class: "queue", "data-queue": q.queue },
                   el("span", { class: "name", text: q.queue }),
                   el("div", { class: "bar", role: "progressbar", "aria-label": f.name + " " + q.queue, "aria-valuemin": "0", "aria-valuemax": "100" }, el("span")),
                   el("span", { class: "numbers" }));
          container.append(row);
        }
        const total = q.bytes_total || 0, percent = total ? Math.min(100, Math.round(q.bytes_done * 100 / total)) : (q.files_total ? Math.round(q.files_done * 100 / q.files_total) : 100);
        const bar = row.querySelector(".bar");
        bar.setAttribute("aria-valuenow", String(percent));
        bar.firstChild.style.width = percent + "%";
        row.querySelector(".numbers").textContent = q.files_done + "/" + q.files_total + " files · " + bytes(q.bytes_done) + " of " + bytes(q.bytes_total)
          + (q.files_failed ? " · " + q.files_failed + " failed" : "") + (q.current.length ? " · now " + q.current.join(", ") : "");
      }
      for (const row of Array.from(container.children)) if (!seen.has(row.dataset.queue)) row.remove();
    }

    async function loadLists(name) {
      const entry = state.folders[name];
      if (!entry) return;
      const q = encodeURIComponent(name);
      try {
        const [failed, conflicts] = await Promise.all([
          api("GET", "/v1/files?folder=" + q + "&status=syncError&limit=50"),
          api("GET", "/v1/files?folder=" + q + "&status=conflict&limit=50")]);
        const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
        renderFailed(entry.parts.failed, name, failed.files);
        renderConflicts(entry.parts.conflicts, name, conflicts.files);
        if (focused) { const again = document.querySelector('[data-focus="' + CSS.escape(focused) + '"]'); if (again) again.focus(); }
      } catch (error) { /* the status line says what is wrong */ }
    }
    function refreshLists() { for (const name of Object.keys(state.folders)) loadLists(name); }

    // A list is drawn again only when it changed: a button keeps its place (and focus) otherwise.
    function unchanged(section, files) {
      const key = JSON.stringify(files.map((f) => [f.path, f.error]));
      if (section.dataset.key === key) return true;
      section.dataset.key = key;
      return false;
    }

    function renderFailed(section, name, files) {
      if (unchanged(section, files)) return;
      section.replaceChildren();
      section.hidden = files.length === 0;
      if (!files.length) return;
      const all = el("button", { type: "button", onclick: (e) => act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(name) + "/retry", {},
        (r) => r.retried.length + " file(s) will be sent again") }, "Retry all");
      section.append(el("h3", { text: "Failed files" }), el("ul", { class: "files" }, ...files.map((file) =>
        el("li", {}, el("span", { class: "path", text: file.path }), el("span", { class: "why", text: file.error || "" }),
           el("div", { class: "row" }, el("button", { type: "button", "data-focus": "retry-" + name + "/" + file.path,
             "aria-label": "Retry " + file.path, onclick: (e) => act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(name) + "/retry",
               { paths: [file.path] }, () => file.path + " will be sent again") }, "Retry"))))), el("div", { class: "actions" }, all));
    }

    function renderConflicts(section, name, files) {
      if (unchanged(section, files)) return;
      section.replaceChildren();
      section.hidden = files.length === 0;
      if (!files.length) return;
      const choice = (file, keep, label) => el("button", { type: "button", "data-focus": "keep-" + keep + "-" + name + "/" + file.path,
        "aria-label": label + " for " + file.path, onclick: (e) => act(e.currentTarget, "POST", "/v1/folders/" + encodeURIComponent(name) + "/resolve",
          { path: file.path, keep }, () => file.path + ": " + label.toLowerCase()) }, label);
      section.append(el("h3", { text: "Conflicts" }), el("ul", { class: "files" }, ...files.map((file) =>
        el("li", {}, el("span", { class: "path", text: file.path }), el("span", { class: "why", text: (file.error || "both sides changed").split("; run ferry resolve")[0] }),
           el("div", { class: "row" }, choice(file, "local", "Keep local"), choice(file, "remote", "Keep remote"), choice(file, "both", "Keep both"))))));
    }

    async function loadChart() {
      try {
        const data = await api("GET", "/v1/history/transfers?hours=24");
        const hours = data.hours, max = Math.max(1, ...hours.map((h) => h.bytes_up + h.bytes_down));
        const width = 480, height = 120, slot = width / hours.length, ns = "http://www.w3.org/2000/svg";
        const svg = document.createElementNS(ns, "svg");
        svg.setAttribute("viewBox", "0 0 " + width + " " + (height + 14));
        svg.setAttribute("preserveAspectRatio", "none");
        hours.forEach((h, i) => {
          const up = h.bytes_up / max * height, down = h.bytes_down / max * height;
          for (const [value, y, color] of [[up, height - up, "var(--up)"], [down, height - up - down, "var(--down)"]]) {
            if (value <= 0) continue;
            const rect = document.createElementNS(ns, "rect");
            rect.setAttribute("x", String(i * slot + 1)); rect.setAttribute("width", String(Math.max(1, slot - 2)));
            rect.setAttribute("y", String(y)); rect.setAttribute("height", String(Math.max(1, value)));
            rect.setAttribute("fill", color);
            const title = document.createElementNS(ns, "title");
            title.textContent = when(h.hour).slice(0, 16) + ": " + h.files + " files, " + bytes(h.bytes_up) + " sent, " + bytes(h.bytes_down) + " received";
            rect.append(title);
            svg.append(rect);
          }
        });
        const axis = document.createElementNS(ns, "line");
        axis.setAttribute("x1", "0"); axis.setAttribute("x2", String(width)); axis.setAttribute("y1", String(height + .5)); axis.setAttribute("y2", String(height + .5));
        axis.setAttribute("stroke", "#d8dce3");
        svg.append(axis);
        const total = hours.reduce((sum, h) => sum + h.files, 0);
        document.getElementById("chart").replaceChildren(svg);
        document.getElementById("chart").setAttribute("aria-label", total + " files moved in the last 24 hours, " + bytes(hours.reduce((s, h) => s + h.bytes_up, 0)) + " sent");
      } catch (error) { /* shown by the status line */ }
    }

    // The event stream through fetch, so that the key travels in a header; reconnects with Last-Event-ID.
    async function listen() {
      const live = document.getElementById("live");
      for (;;) {
        try {
          const headers = { "Accept": "text/event-stream" };
          if (state.key) headers["X-API-Key"] = state.key;
          if (state.lastEventId) headers["Last-Event-ID"] = state.lastEventId;
          const response = await fetch("/v1/events", { headers });
          if (response.status === 401) { live.textContent = "offline"; live.className = "pill"; askForKey(); return; }
          if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
          live.textContent = "live"; live.className = "pill on";
          const reader = response.body.getReader(), decoder = new TextDecoder();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const block = buffer.slice(0, end); buffer = buffer.slice(end + 2);
              let name = "message", data = "", id = null;
              for (const line of block.split("\n")) {
                if (line.startsWith("event:")) name = line.slice(6).trim();
                else if (line.startsWith("data:")) data += line.slice(5).trim();
                else if (line.startsWith("id:")) id = line.slice(3).trim();
              }
              if (id) state.lastEventId = id;
              if (data) handle(name, JSON.parse(data));
            }
          }
        } catch (error) { /* reconnect below */ }
        live.textContent = "reconnecting"; live.className = "pill";
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }

    let chartTimer = null;
    function handle(name, data) {
      if (name === "status") renderStatus(data);
      else if (name === "run_ended" || name === "reset") { refreshLists(); clearTimeout(chartTimer); chartTimer = setTimeout(loadChart, 500); }
      else if (name === "failed" || name === "conflict") { if (data.folder) loadLists(data.folder); }
    }

    document.getElementById("pause-all").addEventListener("click", (e) => act(e.currentTarget, "POST", "/v1/pause", undefined, () => "every folder paused"));
    document.getElementById("resume-all").addEventListener("click", (e) => act(e.currentTarget, "POST", "/v1/resume", undefined, () => "every folder resumed"));

    async function start() {
      try {
        // A key that may only read gets no buttons it could not use.
        const access = await api("GET", "/v1/access");
        document.body.classList.toggle("read-only", !access.actions);
        document.getElementById("access").hidden = access.actions;
        renderStatus(await api("GET", "/v1/status"));
        say("");
        loadChart();
        if (!state.stream) state.stream = listen();
      } catch (error) { say(error.message, true); }
    }
    start();
    """#
}
