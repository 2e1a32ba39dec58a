"use strict";
// The FaceSeal console: every action is a call of the management API (/manage/v1) with the API key as a bearer
// header. The key lives only in this closure for the life of the tab: never in storage, a cookie or a URL.
(function () {
  const api = "/manage/v1";
  let apiKey = null;
  let tenant = null;
  let auditBefore = null;

  const $ = (id) => document.getElementById(id);

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === "onclick") { node.addEventListener("click", value); } else { node.setAttribute(name, value); }
    }
    for (const child of children) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function notice(text, bad) {
    const box = $("notice");
    box.textContent = text;
    box.className = bad ? "notice bad" : "notice";
    box.hidden = false;
  }

  async function call(method, path, body) {
    const headers = { "Authorization": "Bearer " + apiKey };
    const init = { method: method, headers: headers, cache: "no-store", credentials: "omit" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(api + path, init);
    const text = await response.text();
    const json = text ? JSON.parse(text) : {};
    if (!response.ok) {
      throw new Error((json.error || ("HTTP " + response.status)) + (json.error_description ? ": " + json.error_description : ""));
    }
    return json;
  }

  async function run(action) {
    try {
      await action();
    } catch (error) {
      notice(error.message, true);
    }
  }

  function table(id, headings, rows) {
    return el("table", { id: id },
      el("thead", {}, el("tr", {}, ...headings.map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows));
  }

  function field(label, input) {
    return el("label", {}, label, input);
  }

  function show(view) {
    for (const section of document.querySelectorAll("div[data-view]")) { section.hidden = section.dataset.view !== view; }
    for (const button of document.querySelectorAll("nav button[data-view]")) {
      if (button.dataset.view === view) { button.setAttribute("aria-current", "page"); } else { button.removeAttribute("aria-current"); }
    }
    $("notice").hidden = true;
    const loaders = { tenants: loadTenants, applications: loadApplications, users: loadUsers, invitations: loadInvitations,
                      devices: loadDevices, audit: () => loadAudit(true) };
    run(loaders[view]);
  }

  // Sign-in: the key is checked by listing tenants (an administrator key sees all, a tenant key its own).
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    apiKey = $("api-key").value;
    $("api-key").value = "";
    run(async () => {
      try {
        const tenants = await call("GET", "/tenants");
        $("signin").hidden = true;
        $("console").hidden = false;
        fillTenants(tenants.tenants);
        show("tenants");
      } catch (error) {
        apiKey = null;
        throw error;
      }
    });
  });

  $("sign-out").addEventListener("click", () => {
    apiKey = null;
    tenant = null;
    $("console").hidden = true;
    $("signin").hidden = false;
  });

  for (const button of document.querySelectorAll("nav button[data-view]")) {
    button.addEventListener("click", () => show(button.dataset.view));
  }

  function fillTenants(items) {
    const select = $("tenant");
    select.replaceChildren(...items.map((t) => el("option", { value: t.id }, t.id + " — " + t.name)));
    if (!tenant && items.length) { tenant = items[0].id; }
    if (tenant) { select.value = tenant; }
  }

  $("tenant").addEventListener("change", () => {
    tenant = $("tenant").value;
    const current = document.querySelector("nav button[aria-current=page]");
    show(current ? current.dataset.view : "tenants");
  });

  const t = () => "/tenants/" + encodeURIComponent(tenant);

  async function loadTenants() {
    const tenants = await call("GET", "/tenants");
    fillTenants(tenants.tenants);
    const view = $("tenants-view");
    const rows = tenants.tenants.map((item) => el("tr", {}, el("td", {}, item.id), el("td", {}, item.name), el("td", {}, item.created_at)));
    const policy = el("textarea", { id: "policy", rows: "12" });
    if (tenant) {
      const shown = await call("GET", t());
      policy.value = JSON.stringify(shown.policy, null, 2);
    }
    const id = el("input", { id: "new-tenant-id", placeholder: "acme" });
    const name = el("input", { id: "new-tenant-name", placeholder: "Acme Inc." });
    view.replaceChildren(
      el("h2", {}, "Tenants"), table("tenant-list", ["Id", "Name", "Created"], rows),
      el("h2", {}, "Policy of the selected tenant"), policy,
      el("p", {}, el("button", { id: "save-policy", onclick: () => run(async () => {
        await call("PATCH", t() + "/policy", JSON.parse(policy.value));
        notice("Policy saved.");
      }) }, "Save policy")),
      el("form", { id: "tenant-form" }, el("h3", {}, "New tenant"), field("Id", id), field("Name", name),
        el("p", {}, el("button", { id: "create-tenant", type: "button", onclick: () => run(async () => {
          await call("POST", "/tenants", { id: id.value, name: name.value });
          tenant = id.value;
          notice("Tenant " + id.value + " created.");
          await loadTenants();
        }) }, "Create tenant"))));
  }

  async function loadApplications() {
    const apps = await call("GET", t() + "/applications");
    const rows = apps.applications.map((app) => el("tr", { "data-client-id": app.client_id, "data-label": app.label },
      el("td", {}, app.label), el("td", { class: "client-id" }, app.client_id), el("td", {}, app.client_auth),
      el("td", {}, (app.redirect_uris || []).join(" ")),
      el("td", {},
        el("button", { class: "secondary", onclick: () => run(async () => {
          const uris = window.prompt("Redirect URIs (space-separated)", (app.redirect_uris || []).join(" "));
          if (uris === null) { return; }
          await call("PATCH", t() + "/applications/" + encodeURIComponent(app.client_id),
                     { redirect_uris: uris.split(/\s+/).filter((u) => u) });
          notice("Application " + app.label + " updated.");
          await loadApplications();
        }) }, "Edit redirect URIs"), " ",
        el("button", { class: "secondary rotate", onclick: () => run(async () => {
          const rotated = await call("POST", t() + "/applications/" + encodeURIComponent(app.client_id) + "/secret", {});
          showSecret(rotated);
        }) }, "Rotate secret"))));
    const label = el("input", { id: "new-app-label", placeholder: "Shop" });
    const redirects = el("input", { id: "new-app-redirects", placeholder: "https://shop.example/callback" });
    const delivery = el("input", { id: "new-app-delivery", placeholder: "https://shop.example/faceseal/delivery (optional)" });
    $("applications-view").replaceChildren(
      el("h2", {}, "Applications of " + tenant),
      table("application-list", ["Label", "Client id", "Authentication", "Redirect URIs", ""], rows),
      el("div", { id: "secret-box", hidden: "" }),
      el("form", { id: "application-form" }, el("h3", {}, "New application"), field("Label", label),
        field("Redirect URIs (space-separated)", redirects), field("Delivery endpoint", delivery),
        el("p", {}, el("button", { id: "create-application", type: "button", onclick: () => run(async () => {
          const body = { label: label.value, redirect_uris: redirects.value.split(/\s+/).filter((u) => u) };
          if (delivery.value) { body.delivery_endpoint = delivery.value; }
          const created = await call("POST", t() + "/applications", body);
          await loadApplications();
          showSecret(created);
        }) }, "Create application"))));
  }

  function showSecret(app) {
    const box = $("secret-box");
    box.replaceChildren(el("p", {}, "Client id ", el("code", { id: "shown-client-id" }, app.client_id),
      " — client secret (shown once): ", el("code", { id: "shown-secret" }, app.client_secret || "(private_key_jwt)")));
    box.className = "notice";
    box.hidden = false;
  }

  async function loadUsers() {
    const users = await call("GET", t() + "/users");
    const rows = users.users.map((user) => el("tr", { "data-email": user.email }, el("td", {}, user.email), el("td", {}, user.subject), el("td", {}, user.created_at)));
    const email = el("input", { id: "new-user-email", type: "email", placeholder: "ada@example.com" });
    $("users-view").replaceChildren(
      el("h2", {}, "Users of " + tenant), table("user-list", ["Email", "Subject", "Created"], rows),
      el("form", { id: "user-form" }, el("h3", {}, "New user"), field("Email", email),
        el("p", {}, el("button", { id: "create-user", type: "button", onclick: () => run(async () => {
          await call("POST", t() + "/users", { email: email.value });
          notice("User " + email.value + " created.");
          await loadUsers();
        }) }, "Create user"))));
  }

  async function loadInvitations() {
    const apps = await call("GET", t() + "/applications");
    const email = el("input", { id: "invite-email", type: "email", placeholder: "ada@example.com" });
    const app = el("select", { id: "invite-app" }, ...apps.applications.map((a) => el("option", { value: a.client_id }, a.label)));
    const result = el("div", { id: "invitation", hidden: "" });
    $("invitations-view").replaceChildren(
      el("h2", {}, "Invite a user to enrol a phone"),
      el("form", { id: "invitation-form" }, field("Email (an existing user)", email), field("Application", app),
        el("p", {}, el("button", { id: "create-invitation", type: "button", onclick: () => run(async () => {
          const invitation = await call("POST", t() + "/invitations", { email: email.value, client_id: app.value });
          const qr = await fetch("/console/qr", { method: "POST", body: invitation.universal_link, cache: "no-store" });
          const image = el("img", { id: "invitation-qr", alt: "QR code of the enrolment link", width: "264", height: "264" });
          if (qr.ok) { image.src = URL.createObjectURL(await qr.blob()); }
          result.replaceChildren(el("p", {}, "Invitation ", el("code", {}, invitation.id), " for ", invitation.subject,
            ", valid until ", invitation.expires_at, ". Scan with the phone, or open the link there:"), image,
            el("p", {}, el("a", { id: "invitation-link", href: invitation.universal_link }, "enrolment link")));
          result.hidden = false;
        }) }, "Create invitation"))),
      result);
  }

  async function loadDevices() {
    const devices = await call("GET", t() + "/devices");
    const rows = devices.devices.map((device) => {
      const target = t() + "/devices/" + encodeURIComponent(device.id);
      const actions = device.status === "active" ? [
        el("button", { class: "danger revoke", onclick: () => run(async () => {
          await call("POST", target + "/revoke", {});
          notice("Device " + device.device_label + " revoked.");
          await loadDevices();
        }) }, "Revoke"), " ",
        el("button", { class: "danger terminate", onclick: () => run(async () => {
          if (!window.confirm("Terminate: the device's keys end for good. Continue?")) { return; }
          await call("POST", target + "/terminate", {});
          notice("Device " + device.device_label + " terminated.");
          await loadDevices();
        }) }, "Terminate")] : [];
      return el("tr", { "data-device-id": device.id, "data-status": device.status }, el("td", {}, device.device_label), el("td", {}, device.subject),
        el("td", {}, device.client_id), el("td", { class: "status" }, device.status), el("td", {}, ...actions));
    });
    $("devices-view").replaceChildren(el("h2", {}, "Devices of " + tenant),
      table("device-list", ["Device", "User", "Application", "Status", ""], rows),
      el("p", {}, el("button", { id: "refresh-devices", class: "secondary", onclick: () => run(loadDevices) }, "Refresh")));
  }

  async function loadAudit(first) {
    if (first) { auditBefore = null; }
    const page = await call("GET", t() + "/audit?limit=25" + (auditBefore ? "&before=" + auditBefore : ""));
    const rows = page.events.map((event) => el("tr", {}, el("td", {}, event.sequence), el("td", {}, event.at),
      el("td", { class: "kind", "data-kind": event.kind }, event.kind), el("td", {}, event.actor || ""), el("td", {}, event.target || "")));
    auditBefore = page.next_before || null;
    const older = el("button", { id: "audit-older", class: "secondary", onclick: () => run(() => loadAudit(false)) }, "Older");
    if (!auditBefore) { older.disabled = true; }
    $("audit-view").replaceChildren(el("h2", {}, "Audit log of " + tenant),
      table("audit-list", ["#", "At", "Event", "Actor", "Target"], rows),
      el("p", {}, el("button", { id: "audit-newest", class: "secondary", onclick: () => run(() => loadAudit(true)) }, "Newest"), " ", older));
  }
})();
