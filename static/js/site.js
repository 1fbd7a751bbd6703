// Behaviour the pages share. Kept out of the templates: the Content-Security-Policy
// allows scripts from this site's static files only, never inline ones.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy-from]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copyFrom);
  if (source && navigator.clipboard) navigator.clipboard.writeText(source.innerText);
});

// A table wider than its box, or a block of code longer than its own, scrolls inside it:
// keyboard users must be able to reach and scroll it too (axe: scrollable-region-focusable),
// so a box that does scroll takes the focus and becomes a region named after the nearest
// heading before it. Two such regions under one
// heading get numbers: landmarks with the same name cannot be told apart (axe: landmark-unique).
const headingBefore = (box) => {
  for (let node = box; node && node !== document.body; node = node.parentElement) {
    for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
      if (/^H[1-6]$/.test(sibling.tagName)) return sibling.textContent.trim();
    }
  }
  return "Table";
};
const focusableScrollers = () => {
  const named = new Map();
  for (const box of document.querySelectorAll("[role=region][aria-label]")) {
    const label = box.getAttribute("aria-label");
    named.set(label, (named.get(label) || 0) + 1);
  }
  for (const box of document.querySelectorAll(".table-scroll, .scroll-x, .lineage-scroll, pre")) {
    const sideways = box.scrollWidth > box.clientWidth;
    if (box.hasAttribute("tabindex") || !(sideways || box.scrollHeight > box.clientHeight)) continue;
    if (getComputedStyle(box).overflow === "visible") continue;  // it grows instead: nothing to scroll
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    const name = `${headingBefore(box)} (${sideways ? "scrolls sideways" : "scrolls"})`;
    const seen = named.get(name) || 0;
    named.set(name, seen + 1);
    box.setAttribute("aria-label", seen ? `${name}, ${seen + 1}` : name);
  }
};
document.addEventListener("DOMContentLoaded", focusableScrollers);
window.addEventListener("resize", focusableScrollers);
