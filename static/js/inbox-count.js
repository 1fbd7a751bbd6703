// The navigation's inbox count: fetched after the page is shown, so that no page pays
// for every app's inbox queries before its first byte (GET /api/inbox/count/).
(() => {
  const link = document.getElementById("nav-inbox");
  const badge = link && link.querySelector(".nav-count");
  if (!badge) return;
  fetch(link.dataset.countUrl, {credentials: "same-origin", headers: {Accept: "application/json"}})
    .then((response) => (response.ok ? response.json() : null))
    .then((answer) => {
      if (!answer || typeof answer.count !== "number") return;
      // "25+": the inbox reads at most the first 25 of each kind (answer.more).
      const shown = answer.more ? `${answer.count}+` : String(answer.count);
      badge.textContent = shown;
      badge.hidden = answer.count === 0;
      link.setAttribute("aria-label", `Inbox, ${shown} item${answer.count === 1 ? "" : "s"} need action`);
      // On a phone the navigation folds behind "Menu": the count shows on it too.
      const toggle = document.querySelector("header.top .nav-toggle");
      if (toggle && answer.count > 0 && !toggle.querySelector(".nav-count")) {
        const copy = badge.cloneNode(true);
        copy.setAttribute("aria-hidden", "true");
        toggle.append(copy);
      }
    })
    .catch(() => {});  // the link still works without its count
})();
