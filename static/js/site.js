// Behaviour the pages share. Kept out of the templates: the Content-Security-Policy
// allows scripts from this site's static files only, never inline ones.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy-from]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copyFrom);
  if (source && navigator.clipboard) navigator.clipboard.writeText(source.innerText);
});

// A table wider than its box scrolls inside it: keyboard users must be able to reach and
// scroll it too (axe: scrollable-region-focusable), so a box that does scroll takes the focus
// and is named after the section it is in.
const focusableScrollers = () => {
  for (const box of document.querySelectorAll(".table-scroll, .lineage-scroll")) {
    if (box.hasAttribute("tabindex") || box.scrollWidth <= box.clientWidth) continue;
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    const heading = box.closest("section")?.querySelector("h2, h3");
    box.setAttribute("aria-label", (heading ? heading.textContent.trim() : "Table") + " (scrolls sideways)");
  }
};
document.addEventListener("DOMContentLoaded", focusableScrollers);
window.addEventListener("resize", focusableScrollers);
