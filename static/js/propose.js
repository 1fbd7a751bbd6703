// The propose page. Picking a contract starts the editor from its latest version;
// the impact preview (the checker's verdict, the suggested version, the teams a
// breaking change would wait for) follows the document as it is typed, a moment
// after the last keystroke. Nothing is stored until the form is submitted.
(() => {
  const form = document.getElementById("propose-form");
  if (!form) return;
  const picker = form.querySelector("select[name=contract]");
  const editor = form.querySelector("textarea[name=document]");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const panel = document.getElementById("impact-preview");
  const status = document.getElementById("preview-status");
  const body = document.getElementById("preview-body");
  const errors = document.getElementById("preview-errors");
  const WAIT_MS = 400;
  let timer = null;
  let asked = 0;

  const element = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  };

  const fill = (id, items, build) => {
    const list = document.getElementById(id);
    list.replaceChildren(...items.map(build));
    document.getElementById(`${id}-block`).hidden = items.length === 0;
  };

  const team = (impact) => {
    const item = element("li");
    item.dataset.team = impact.team;
    item.append(element("strong", impact.team), document.createTextNode(`: ${impact.why}`));
    return item;
  };

  const show = (state, message) => {
    panel.dataset.state = state;
    status.textContent = message;
    status.hidden = !message;
  };

  const render = (answer) => {
    const verdict = document.getElementById("preview-verdict");
    const tag = answer.compatible ? element("span", "compatible", "tag good") : element("span", "breaking", "tag bad");
    verdict.replaceChildren(tag, document.createTextNode(` ${answer.verdict}`));

    const version = document.getElementById("preview-version");
    version.replaceChildren();
    if (answer.suggested_version) {
      version.append("Suggested version ", element("strong", answer.suggested_version));
      if (answer.suggested_bump && answer.suggested_bump !== "none") {
        version.append(" ", element("span", answer.suggested_bump, "tag"));
      }
      if (answer.latest_published) version.append(` (latest published: ${answer.latest_published})`);
    }
    if (answer.version_problem) version.append(element("span", ` ${answer.version_problem}`, "preview-warning"));

    // What submit does is the gate's decision (answer.outcome), the same one publishing acts on.
    const waiting = answer.affected.map((t) => t.team);
    const outcome = document.getElementById("preview-outcome");
    outcome.dataset.outcome = answer.outcome || "";
    if (answer.outcome === "refused") {
      outcome.replaceChildren(element("span", "refused", "tag bad"),
        document.createTextNode(` Submitting is refused: ${answer.outcome_message}`));
    } else if (answer.outcome === "unchanged") {
      outcome.textContent = `Submitting changes nothing: ${answer.outcome_message}.`;
    } else if (answer.outcome === "breaking" && answer.waits_in) {
      outcome.textContent = `Submitting opens no new change request: ${answer.outcome_message}`;
    } else if (answer.outcome === "breaking") {
      outcome.textContent = `Submitting opens a change request that waits for ${waiting.length ? waiting.join(", ") : "no team (none is affected)"}.`;
    } else {
      outcome.textContent = "Submitting publishes it at once: no change request.";
    }

    const breaking = (answer.changes || []).filter((change) => change.breaking);
    fill("preview-changes", breaking, (change) => {
      const item = element("li");
      // a dataframe contract's change is said of its columns (change.summary), never of schema paths
      if (change.summary) item.append(document.createTextNode(change.summary));
      else item.append(element("code", change.path || "/"), document.createTextNode(` ${change.reason}`));
      return item;
    });
    fill("preview-affected", answer.affected, team);
    fill("preview-told", answer.not_affected, team);
    fill("preview-unregistered", answer.unregistered_readers, (reader) =>
      element("li", `${reader.job} (${reader.team || "team unknown"}) reads ${reader.reads ? reader.reads.join(", ") : "all columns"} of ${reader.dataset}`));
    body.hidden = false;
    errors.hidden = true;
  };

  // --- the editor: line numbers in a gutter, and a YAML error marked at its line, said once ---
  const gutter = form.querySelector(".code-editor .gutter");
  const band = form.querySelector(".code-editor .error-band");
  const editorError = document.getElementById("editor-error");
  let errorLine = null;

  const lineHeight = () => parseFloat(getComputedStyle(editor).lineHeight) || 18.85;
  const padTop = () => parseFloat(getComputedStyle(editor).paddingTop) || 0;

  const placeBand = () => {
    if (!band || errorLine === null) return;
    band.style.top = `${padTop() + (errorLine - 1) * lineHeight() - editor.scrollTop}px`;
    band.style.left = `${editor.offsetLeft}px`;
  };

  const renumber = () => {
    if (!gutter) return;
    const count = editor.value.split("\n").length;
    if (gutter.childElementCount !== count) {
      const items = [];
      for (let n = 1; n <= count; n += 1) items.push(element("li", String(n)));
      gutter.replaceChildren(...items);
    }
    [...gutter.children].forEach((item, index) => item.classList.toggle("error", index + 1 === errorLine));
    gutter.scrollTop = editor.scrollTop;
  };

  // Put the caret where the loader stopped, and the line in view.
  const goTo = (line, column) => {
    const lines = editor.value.split("\n");
    let offset = 0;
    for (let n = 0; n < Math.min(line - 1, lines.length); n += 1) offset += lines[n].length + 1;
    offset += Math.max(0, (column || 1) - 1);
    editor.focus();
    editor.setSelectionRange(offset, offset);
    editor.scrollTop = Math.max(0, (line - 3) * lineHeight());
  };

  const clearEditorError = () => {
    errorLine = null;
    if (band) band.hidden = true;
    if (editorError) {
      editorError.hidden = true;
      editorError.replaceChildren();
    }
    renumber();
  };

  const markEditorError = (line, column, message) => {
    errorLine = line || null;
    editorError.replaceChildren();
    if (line) {
      const where = element("a", `Line ${line}, column ${column}`, "editor-error-where");
      where.href = "#id_document";
      where.addEventListener("click", (event) => { event.preventDefault(); goTo(line, column); });
      editorError.append(where, document.createTextNode(": "));
    }
    editorError.append(element("span", message, "editor-error-message"));
    editorError.hidden = false;
    if (band) band.hidden = !line;
    renumber();
    placeBand();
  };

  editor.addEventListener("scroll", () => {
    if (gutter) gutter.scrollTop = editor.scrollTop;
    placeBand();
  });
  editor.addEventListener("input", renumber);
  if (editorError && editorError.dataset.line) {
    // the server refused a submitted document: the same mark the preview puts
    const where = editorError.querySelector(".editor-error-where");
    errorLine = Number(editorError.dataset.line);
    if (where) {
      where.addEventListener("click", (event) => {
        event.preventDefault();
        goTo(errorLine, Number(editorError.dataset.column));
      });
    }
    if (band) band.hidden = false;
  }
  renumber();
  placeBand();

  const refuse = (answer) => {
    body.hidden = true;
    if (answer.code === "bad_document" && answer.message) {
      // a YAML error is shown once, in the editor at its line, not again in the preview
      errors.hidden = true;
      markEditorError(answer.line, answer.column, answer.message);
      show("refused", answer.line ? `Not previewable yet: the YAML has an error at line ${answer.line} (marked in the editor).`
                                  : "Not previewable yet: the YAML has an error (under the editor).");
      return;
    }
    clearEditorError();
    errors.replaceChildren(...(answer.errors || []).map((text) => element("li", text)));
    errors.hidden = !(answer.errors || []).length;
    show("refused", answer.errors && answer.errors.length ? "Not previewable yet: the publish gates refuse it." : `Not previewable yet: ${answer.detail}`);
  };

  const refresh = async () => {
    const mine = ++asked;
    if (!editor.value.trim()) {
      body.hidden = true;
      errors.hidden = true;
      show("empty", "Pick a contract or paste a document: the preview follows what you type.");
      return;
    }
    show("loading", "Checking…");
    let response;
    try {
      response = await fetch(form.dataset.previewUrl, {
        method: "POST", credentials: "same-origin",
        headers: { "X-CSRFToken": csrf }, body: new URLSearchParams({ document: editor.value }),
      });
    } catch (failure) {
      if (mine === asked) show("failed", "The preview could not be reached; submitting still runs the gate.");
      return;
    }
    const answer = await response.json().catch(() => ({ detail: `the server answered ${response.status}` }));
    if (mine !== asked) return; // a later keystroke's answer is on its way
    if (response.ok) {
      clearEditorError();
      render(answer);
      show("ready", "");
    } else {
      refuse(answer);
    }
  };

  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, WAIT_MS);
  };

  editor.addEventListener("input", soon);

  if (picker) {
    picker.addEventListener("change", async () => {
      if (!picker.value) return;
      show("loading", "Loading its latest version…");
      const response = await fetch(`${form.dataset.startUrl}?contract=${encodeURIComponent(picker.value)}`,
                                   { credentials: "same-origin" });
      if (!response.ok) {
        show("failed", "That contract could not be loaded.");
        return;
      }
      const start = await response.json();
      editor.value = start.document;
      const url = new URL(window.location.href);
      url.searchParams.set("contract", start.contract);
      window.history.replaceState(null, "", url);
      refresh();
    });
  }

  if (editor.value.trim()) refresh();
})();
