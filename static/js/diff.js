// The review page's diff: unfold the unchanged lines a "Show N unchanged lines" link
// stands for, in place. Without scripts the link reloads the page with the whole
// document (?context=all), so nothing is out of reach.
document.addEventListener("click", (event) => {
  const link = event.target.closest("[data-unfold]");
  if (!link) return;
  const rows = document.getElementById(link.dataset.unfold);
  if (!rows) return;
  event.preventDefault();
  rows.hidden = false;
  link.closest("tbody").remove();
});
