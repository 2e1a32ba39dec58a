"use strict";
// The sign-in page: polls its status once a second (the cookie set with the page proves the browser) and, once
// the sign-in is over, follows its continue link, which redirects to the application.
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
