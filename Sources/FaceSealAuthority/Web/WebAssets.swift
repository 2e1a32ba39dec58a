import FaceSealHTTP

/// The static files of the authority's pages, compiled into the binary (no build step, no CDN, nothing read from
/// disk at run time): the shared stylesheet and the sign-in page's script. The console's files are in
/// `ConsoleAssets`.
enum WebAssets {
    /// Path of the shared stylesheet.
    static let stylesheetPath = "/assets/faceseal.css"
    /// Path of the sign-in page's script.
    static let signInScriptPath = "/assets/signin.js"

    /// Serves `text` with `contentType` under the pages' security headers; cacheable for five minutes.
    static func response(_ text: String, contentType: String) -> HTTPResponse {
        var headers = HTML.securityHeaders()
        headers["Content-Type"] = contentType
        headers["Cache-Control"] = "public, max-age=300"
        return HTTPResponse(headers: headers, body: Array(text.utf8))
    }

    /// The stylesheet of every page (sign-in, errors, console).
    static let stylesheet = #"""
    :root { --ink: #1d232b; --muted: #5b6673; --line: #d8dde3; --accent: #2f5bd3; --bad: #b3261e; --good: #1e7d32; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f3f5f8; }
    main.card { max-width: 30rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid var(--line); border-radius: 12px; }
    main.card h1 { font-size: 1.35rem; margin: 0 0 1rem; }
    .brand { display: flex; align-items: center; gap: .75rem; margin-bottom: 1rem; }
    .brand img { width: 48px; height: 48px; object-fit: contain; }
    .brand-bar { display: block; width: 100%; height: 6px; margin-bottom: 1.25rem; }
    .binding { font: 600 1.3rem/1.2 ui-monospace, monospace; letter-spacing: .06em; padding: .5rem .75rem; border: 1px dashed var(--line); display: inline-block; }
    .qr { display: block; margin: 1rem auto; }
    .muted { color: var(--muted); font-size: .9rem; }
    .status { margin-top: 1rem; font-weight: 600; }
    .error h1 { color: var(--bad); }
    .claims { width: 100%; border-collapse: collapse; margin-top: 1rem; font-size: .9rem; }
    .claims th, .claims td { text-align: left; border-bottom: 1px solid var(--line); padding: .35rem .25rem; vertical-align: top; word-break: break-all; }
    a.button, button { display: inline-block; padding: .55rem 1rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; text-decoration: none; font: inherit; cursor: pointer; }
    button.secondary { background: #fff; color: var(--accent); }
    button.danger { background: var(--bad); border-color: var(--bad); }
    input, select, textarea { font: inherit; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 6px; width: 100%; }
    label { display: block; margin: .5rem 0 .2rem; font-size: .9rem; color: var(--muted); }
    .console { display: grid; grid-template-columns: 14rem 1fr; min-height: 100vh; }
    .console nav { background: #1d232b; color: #fff; padding: 1rem; }
    .console nav button { display: block; width: 100%; margin: .25rem 0; text-align: left; background: transparent; border-color: transparent; }
    .console nav button[aria-current="page"] { background: #39424e; }
    .console section { padding: 1.5rem 2rem; }
    .console table { width: 100%; border-collapse: collapse; background: #fff; }
    .console th, .console td { text-align: left; border-bottom: 1px solid var(--line); padding: .4rem .5rem; font-size: .9rem; }
    .console form { max-width: 34rem; background: #fff; padding: 1rem; border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; }
    .notice { padding: .6rem .8rem; border-radius: 6px; background: #e8f0fe; margin: .75rem 0; }
    .notice.bad { background: #fce8e6; color: var(--bad); }
    [hidden] { display: none !important; }
    """#

    /// The sign-in page's script: polls the page's status once a second (the cookie set with the page proves the
    /// browser) and, once the sign-in is over, follows its continue link, which redirects to the application.
    static let signInScript = #"""
    "use strict";
    (function () {
      const main = document.getElementById("signin");
      if (!main) { return; }
      const statusURL = main.dataset.statusUrl;
      const continueURL = main.dataset.continueUrl;
      const line = document.getElementById("status");
      const words = {
        pending: "Waiting for your phone…",
        claimed: "Your phone has the request: look at it and approve with your face.",
        finished: "Done: returning to the application…"
      };
      let stopped = false;
      async function poll() {
        if (stopped) { return; }
        try {
          const response = await fetch(statusURL, { credentials: "same-origin", cache: "no-store" });
          if (response.ok) {
            const body = await response.json();
            if (words[body.status]) { line.textContent = words[body.status]; }
            if (body.status === "finished") {
              stopped = true;
              window.location.assign(continueURL);
              return;
            }
          } else if (response.status === 404 || response.status === 403) {
            stopped = true;
            line.textContent = "This sign-in is no longer valid. Start again at the application.";
            return;
          }
        } catch (error) {
          line.textContent = "The authority cannot be reached; still trying…";
        }
        window.setTimeout(poll, 1000);
      }
      poll();
    })();
    """#
}
