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

// A node's label is cut to fit its box: hovering over it or moving the focus to it (Tab)
// writes its full name and status under the graph, where it is never clipped.
document.addEventListener("DOMContentLoaded", () => {
  for (const box of document.querySelectorAll(".lineage-scroll")) {
    const caption = box.parentElement.querySelector(".lineage-focus");
    if (!caption) continue;
    const show = (event) => {
      const node = event.target.closest("a[data-name]");
      if (!node) return;
      const status = node.dataset.status;
      caption.textContent = node.dataset.name + (status ? " — " + status : "");
    };
    box.addEventListener("focusin", show);
    box.addEventListener("mouseover", show);
  }
});
