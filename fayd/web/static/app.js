"use strict";
// The household page. Everything it shows comes from fayd's JSON routes, written into the
// page with textContent only (a name or a memory can never become markup). Each POST sends
// the session's CSRF token; a 401 means the session ended: back to the login page.
let csrf = "";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function fill(id, items, row, empty) {
  const list = $(id);
  list.replaceChildren(...items.map(row));
  if (!items.length && empty) list.append(el("li", { class: "muted" }, empty));
}

// "Mon 7 Dec, 09:00" in the phone's own language: a weekday and a 24-hour clock read
// more easily than "12/7/2026, 9:00:00 AM".
const WHEN = {
  weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
};
const when = (t) => (t ? new Date(t * 1000).toLocaleString(undefined, WHEN) : "—");

async function api(method, path, body) {
  const options = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.headers["X-CSRF-Token"] = csrf;
    options.body = JSON.stringify(body);
  }
  const answer = await fetch(path, options);
  if (answer.status === 401) {
    window.location.assign("/login");
    throw new Error("logged out");
  }
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(data.error || `${answer.status}`);
  return data;
}

function banner(text) {
  const b = $("banner");
  b.textContent = text;
  b.hidden = !text;
}

async function loadAlerts() {
  const { alerts } = await api("POST", "/api/care/alerts.list", {});
  const open = alerts.filter((a) => a.state === "open");
  $("alerts-none").hidden = open.length > 0;
  fill("alerts", alerts, (a) => el("li", { "data-alert": a.id },
    el("span", { class: `tag ${a.severity}` }, a.severity),
    el("span", { class: `tag ${a.state}` }, a.state),
    el("span", { class: "grow" }, `${a.user || "someone"}: ${a.text} (${when(a.opened_at)})`),
    a.state === "open"
      ? el("button", { class: "primary", type: "button", onclick: () => ack(a.id) }, "Acknowledge")
      : el("span", { class: "muted" }, a.closed_by ? `by ${a.closed_by}` : "")));
  if (!open.length) banner("");
}

async function ack(id) {
  try {
    await api("POST", "/api/care/alerts.ack", { id, by: "the household page" });
    banner("");
  } catch (e) {
    banner(`Could not acknowledge: ${e.message}`);
  }
  await loadAlerts();
}

async function loadStatus() {
  const s = await api("GET", "/api/status");
  $("health").textContent = `fayd ${s.version}: ${s.health}` +
    (s.degraded && s.degraded.length ? ` — ${s.degraded.map((d) => d.message || d.what || JSON.stringify(d)).join("; ")}` : "");
  const problems = [...(s.notices || []).map((n) => ({ level: "NOTE", message: n })), ...(s.last_problems || []).slice().reverse()];
  fill("problems", problems, (p) => el("li", {},
    el("span", { class: "tag" }, p.level), el("span", { class: "grow" }, `${p.message}${p.at ? ` (${when(p.at)})` : ""}`)), "None.");
  fill("models", Object.entries(s.models || {}), ([role, m]) => el("li", {},
    el("span", { class: `tag ${m.ok ? "ok" : "open"}` }, m.ok ? "ok" : "problem"),
    el("span", { class: "grow" }, `${role}: ${m.file || "—"}${m.problem ? ` — ${m.problem}` : ""}${m.fallback ? ` — ${m.fallback}` : ""}`)));
  fill("devices", s.devices || [], (d) => el("li", { "data-device": d.id, "data-online": d.online ? "yes" : "no" },
    el("span", { class: `dot${d.online ? " online" : ""}` }),
    el("strong", {}, d.id),
    el("span", { class: "presence" }, d.online ? "online" : "offline"),
    el("span", { class: "grow muted" }, `${d.user || "nobody's yet"} · ${settingsText(d.settings)}`)), "No devices yet.");
  const select = $("set-device");
  const chosen = select.value;
  select.replaceChildren(...(s.devices || []).map((d) => el("option", { value: d.id }, d.id)));
  if (chosen) select.value = chosen;
}

function settingsText(settings) {
  const pairs = Object.entries(settings || {});
  return pairs.length ? pairs.map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : v}`).join(" ") : "default settings";
}

async function saveSetting(event) {
  event.preventDefault();
  const device = $("set-device").value;
  const out = $("setting-result");
  out.className = "";
  out.textContent = "Saving…";
  try {
    const r = await api("POST", `/api/web/devices/${encodeURIComponent(device)}/settings`,
      { settings: { [$("set-key").value]: $("set-value").value } });
    const where = { applied: "applied on the device", fayd: "applied by fayd", offline: "the device is offline: it gets it when it next connects", silent: "sent; the device did not confirm yet", refused: "the device refused it" }[r.state] || r.state;
    out.className = r.state === "refused" ? "error" : "ok";
    out.textContent = `Saved for ${device}: ${settingsText(r.settings)} — ${where}.`;
  } catch (e) {
    out.className = "error";
    out.textContent = `Not saved: ${e.message}`;
  }
  await loadStatus();
}

async function loadPeople() {
  const { people } = await api("GET", "/api/web/people");
  const blocks = await Promise.all(people.map(async (name) => {
    const { reminders } = await api("GET", `/api/reminders?user=${encodeURIComponent(name)}`);
    const list = el("ul", { class: "rows" }, ...reminders.map((r) => el("li", {},
      el("span", { class: "tag" }, r.kind), el("span", { class: "grow" }, `${r.text} — next ${when(r.next_at)}`))));
    if (!reminders.length) list.append(el("li", { class: "muted" }, "No reminders."));
    return el("div", { "data-person": name }, el("h3", {}, name), list);
  }));
  $("people").replaceChildren(...blocks);
  for (const id of ["digest-user", "memory-user"]) {
    const select = $(id);
    const chosen = select.value;
    select.replaceChildren(...people.map((n) => el("option", { value: n }, n)));
    if (chosen) select.value = chosen;
  }
  const { rules } = await api("POST", "/api/care/rules.list", {});
  fill("rules", rules, (r) => el("li", {}, el("strong", {}, r.name), el("span", { class: "grow" }, `${r.user}: ${r.text}`)), "No care rules yet.");
}

async function showDigest(event) {
  event.preventDefault();
  try {
    const d = await api("POST", "/api/care/digest.show", { user: $("digest-user").value });
    $("digest").textContent = d.text;
  } catch (e) {
    $("digest").textContent = `Could not make the digest: ${e.message}`;
  }
}

async function loadTalk() {
  const { messages } = await api("GET", "/api/web/conversations?limit=30");
  fill("talk", messages, (m) => el("li", {},
    el("span", { class: "tag" }, m.role === "user" ? m.user : "fayd"),
    el("span", { class: "grow" }, m.text), el("span", { class: "muted" }, `${m.device} · ${when(m.created_at)}`)), "No conversations yet.");
}

async function searchMemory(event) {
  event.preventDefault();
  try {
    const { nodes } = await api("GET", `/api/web/memory?q=${encodeURIComponent($("memory-q").value)}&user=${encodeURIComponent($("memory-user").value)}`);
    fill("memory", nodes, (n) => el("li", {}, el("span", { class: "grow" }, n.content), el("span", { class: "muted" }, n.datetime || "")), "Nothing found.");
  } catch (e) {
    fill("memory", [], null, `Could not search: ${e.message}`);
  }
}

async function loadQuarantine() {
  try {
    const { items } = await api("GET", "/api/web/quarantine");
    fill("quarantine", items, (q) => {
      const p = q.payload || {};
      const what = p.content || `${p.subject} ${p.predicate} ${p.object}`;
      const decide = (decision) => async () => {
        await api("POST", `/api/web/quarantine/${q.id}`, { decision }).catch((e) => banner(e.message));
        await loadQuarantine();
      };
      return el("li", {}, el("span", { class: "grow" }, `${q.username}: ${what} (why held: ${q.reason})`),
        el("button", { type: "button", class: "primary", onclick: decide("approve") }, "Remember it"),
        el("button", { type: "button", onclick: decide("reject") }, "Forget it"));
    }, "Nothing is waiting.");
  } catch (e) {
    fill("quarantine", [], null, e.message);
  }
}

function listen() {
  const source = new EventSource("/api/web/events");
  source.addEventListener("hello", () => { $("live").textContent = "Live updates: on"; loadAll(); });
  source.addEventListener("alert", (e) => {
    const a = JSON.parse(e.data);
    if (a.state === "open") banner(`New ${a.severity} alert — see Alerts below.`);
    loadAlerts();
  });
  source.addEventListener("device", () => loadStatus());
  source.onerror = () => {
    $("live").textContent = "Live updates: reconnecting…";
    if (source.readyState === EventSource.CLOSED) {
      // Refused (the session ended?): the session route says; else try again shortly.
      fetch("/api/web/session", { credentials: "same-origin" }).then((r) => {
        if (r.status === 401 || r.status === 400) window.location.assign("/login");
        else setTimeout(listen, 5000);
      }, () => setTimeout(listen, 5000));
    }
  };
}

function loadAll() {
  for (const load of [loadAlerts, loadStatus, loadPeople, loadTalk, loadQuarantine]) {
    load().catch((e) => console.warn(load.name, e));
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  ({ csrf } = await api("GET", "/api/web/session"));
  $("setting").addEventListener("submit", saveSetting);
  $("digest-form").addEventListener("submit", showDigest);
  $("memory-form").addEventListener("submit", searchMemory);
  $("logout").addEventListener("click", async () => {
    await api("POST", "/logout", {}).catch(() => {});
    window.location.assign("/login");
  });
  listen();
});
