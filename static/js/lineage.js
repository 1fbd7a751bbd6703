// A lineage drawing wider than its card scrolls sideways at full size; start with
// the node the page is about in the middle of the view, not the far-left upstream.
document.addEventListener("DOMContentLoaded", () => {
  for (const box of document.querySelectorAll(".lineage-scroll")) {
    const start = box.querySelector(".start rect");
    if (!start || box.scrollWidth <= box.clientWidth) continue;
    const centre = start.x.baseVal.value + start.width.baseVal.value / 2;
    box.scrollLeft = centre - box.clientWidth / 2;
  }
});
