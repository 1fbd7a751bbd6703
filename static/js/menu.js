// The top navigation folds into a menu on narrow screens (under 600 px: static/css/site.css).
// A static file, not an inline script: the Content-Security-Policy allows no inline ones.
// Without this script the navigation simply wraps, visible, under the brand.
(() => {
  const header = document.querySelector("header.top");
  const toggle = header && header.querySelector(".nav-toggle");
  if (!toggle) return;
  document.documentElement.classList.add("has-menu");

  const setOpen = (open) => {
    header.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
  };
  toggle.addEventListener("click", () => setOpen(!header.classList.contains("open")));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.classList.contains("open")) {
      setOpen(false);
      toggle.focus();
    }
  });
  // A click outside the open menu closes it.
  document.addEventListener("click", (event) => {
    if (header.classList.contains("open") && !header.contains(event.target)) setOpen(false);
  });
})();
