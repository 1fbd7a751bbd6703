// Behaviour the pages share. Kept out of the templates: the Content-Security-Policy
// allows scripts from this site's static files only, never inline ones.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy-from]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copyFrom);
  if (source && navigator.clipboard) navigator.clipboard.writeText(source.innerText);
});
