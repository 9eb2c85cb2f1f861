// GraphView front end (anywidget ES module; vendored, no imports, no build step).
//
// Python lays the graph out (dot -> SVG) and owns all state; this module only
// shows the SVG, pans/zooms it, applies highlight classes by node id, and sends
// the id of a clicked node back as the `selected` trait. The wheel scrolls the
// page; Ctrl/Cmd + wheel or the − / + buttons zoom. Node ids are the DOT
// node names, which graphviz writes into each node's <title>.

const KINDS = ["new", "current", "anomaly"];

function nodeId(g) {
  const title = g.querySelector(":scope > title");
  return title ? title.textContent : "";
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function checkbox(model, trait, label) {
  const wrap = el("label", "tg-gv-check");
  const box = el("input");
  box.type = "checkbox";
  box.checked = model.get(trait);
  box.addEventListener("change", () => {
    model.set(trait, box.checked);
    model.save_changes();
  });
  wrap.append(box, document.createTextNode(" " + label));
  return { wrap, sync: () => { box.checked = model.get(trait); } };
}

function render({ model, el: root }) {
  root.classList.add("tg-gv");
  const bar = el("div", "tg-gv-bar");
  const view = el("select", "tg-gv-view");
  for (const v of ["forward", "backward"]) {
    const opt = el("option", null, v + " graph");
    opt.value = v;
    view.append(opt);
  }
  view.value = model.get("view");
  view.addEventListener("change", () => {
    model.set("view", view.value);
    model.save_changes();
  });
  const checks = [
    checkbox(model, "show_values", "values"),
    checkbox(model, "show_grads", "grads"),
    checkbox(model, "collapse", "collapse modules"),
    checkbox(model, "fold_to_fit", "fold to fit"),
  ];
  const reset = el("button", "tg-gv-reset", "reset view");
  const zoomOut = el("button", "tg-gv-zoom-out", "\u2212");
  const zoomIn = el("button", "tg-gv-zoom-in", "+");
  zoomOut.title = "zoom out (or Ctrl + wheel)";
  zoomIn.title = "zoom in (or Ctrl + wheel)";
  const summary = el("span", "tg-gv-summary");
  bar.append(view, ...checks.map((c) => c.wrap), zoomOut, zoomIn, reset, summary);

  const body = el("div", "tg-gv-body");
  const canvas = el("div", "tg-gv-canvas");
  canvas.title = "drag to pan, Ctrl + wheel (or \u2212 / +) to zoom, click a box for its details";
  const stage = el("div", "tg-gv-stage");
  // the way to what the canvas does not show: a sign that says how much, and goes there
  const more = el("button", "tg-gv-more");
  const hint = el("div", "tg-gv-hint", "Ctrl + wheel zooms the graph");
  canvas.append(stage, more, hint);
  const details = el("pre", "tg-gv-details");
  body.append(canvas, details);
  root.append(bar, body);

  // --- pan / zoom: a CSS transform on the stage, so the SVG is never re-laid out.
  // Until the learner pans or zooms, each new picture is fitted to the canvas: whole,
  // unless that would make its text smaller than MIN_TEXT_PX; then it is fitted to the
  // width at readable size and the sign below says how many boxes are further down.
  const MIN_TEXT_PX = 9;
  let tx = 0, ty = 0, scale = 1, touched = false, lastWidth = 0;
  const boxHeight = () => parseFloat(getComputedStyle(canvas).maxHeight) || 0.7 * innerHeight;
  const smallestText = () => { // px of the smallest text at scale 1
    const svg = stage.querySelector("svg");
    const vb = svg && svg.viewBox && svg.viewBox.baseVal;
    if (!vb || !vb.width) return 14;
    const unit = (svg.clientWidth || stage.offsetWidth) / vb.width; // untransformed
    const sizes = [...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize));
    return (sizes.length ? Math.min(...sizes) : 14) * unit;
  };
  const hidden = () => { // boxes below and above the canvas's visible part
    const r = canvas.getBoundingClientRect();
    let below = 0, above = 0;
    for (const g of stage.querySelectorAll("g.node.tg-node")) {
      const b = g.getBoundingClientRect();
      if (b.top > r.bottom - 2) below += 1;
      else if (b.bottom < r.top + 2) above += 1;
    }
    return { below, above };
  };
  const showMore = () => {
    const { below, above } = hidden();
    const plural = (n) => n + (n === 1 ? " more box" : " more boxes");
    more.dataset.where = below ? "below" : above ? "above" : "";
    more.textContent = below ? "\u25bc " + plural(below) + " below: click here, drag, or zoom out (\u2212)"
      : above ? "\u25b2 " + plural(above) + " above: click here to go back up" : "";
    more.style.display = below || above ? "" : "none";
  };
  const apply = () => {
    stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    showMore();
  };
  const fit = () => {
    const w = stage.offsetWidth, h = stage.offsetHeight, cw = canvas.clientWidth;
    if (!w || !cw) return; // not in the page yet: the resize observer calls again
    const wide = Math.min(1, cw / w);
    const whole = Math.min(wide, boxHeight() / h);
    const readable = (MIN_TEXT_PX + 0.05) / smallestText(); // offsetWidth is whole px
    tx = 0; ty = 0; scale = Math.min(wide, Math.max(whole, readable));
    canvas.style.height = Math.max(80, Math.min(boxHeight(), Math.ceil(h * scale) + 4)) + "px";
    apply();
  };
  const resetView = () => { touched = false; fit(); };
  reset.addEventListener("click", resetView);
  more.addEventListener("click", (ev) => {
    ev.stopPropagation();
    const h = stage.offsetHeight * scale;
    ty = more.dataset.where === "below" ? Math.min(0, canvas.clientHeight - h) : 0;
    touched = true;
    apply();
  });
  more.addEventListener("pointerdown", (ev) => ev.stopPropagation());
  more.addEventListener("pointerup", (ev) => ev.stopPropagation());
  const resized = new ResizeObserver(() => {
    if (canvas.clientWidth !== lastWidth) {
      lastWidth = canvas.clientWidth;
      if (!touched) fit();
    }
  });
  resized.observe(canvas);

  const zoomAt = (cx, cy, factor) => {
    const next = Math.min(8, Math.max(0.1, scale * factor));
    // keep the point under the cursor fixed while zooming
    tx = cx - (cx - tx) * (next / scale);
    ty = cy - (cy - ty) * (next / scale);
    scale = next;
    touched = true;
    apply();
  };
  let hintTimer = 0;
  const onWheel = (ev) => {
    // the wheel scrolls the notebook, as on any page; Ctrl/Cmd + wheel (and a pinch on a
    // touchpad, which browsers send as Ctrl + wheel) zooms, as map widgets do
    if (!(ev.ctrlKey || ev.metaKey)) {
      hint.classList.add("tg-gv-hint-on");
      clearTimeout(hintTimer);
      hintTimer = setTimeout(() => hint.classList.remove("tg-gv-hint-on"), 1200);
      return;
    }
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-ev.deltaY * 0.0015));
  };
  canvas.addEventListener("wheel", onWheel, { passive: false });
  const zoomMiddle = (factor) => zoomAt(canvas.clientWidth / 2, canvas.clientHeight / 2, factor);
  zoomOut.addEventListener("click", () => zoomMiddle(1 / 1.25));
  zoomIn.addEventListener("click", () => zoomMiddle(1.25));

  let drag = null;
  const onDown = (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx, ty, moved: false };
    canvas.setPointerCapture?.(ev.pointerId);
  };
  const onMove = (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (drag.moved) {
      touched = true;
      tx = drag.tx + dx;
      ty = drag.ty + dy;
      apply();
      canvas.classList.add("tg-gv-dragging");
    }
  };
  const onUp = (ev) => {
    if (!drag) return;
    const wasDrag = drag.moved;
    drag = null;
    canvas.classList.remove("tg-gv-dragging");
    if (wasDrag) return;
    // a click (no drag): select the node under the pointer, or clear the selection
    const target = document.elementFromPoint(ev.clientX, ev.clientY);
    const g = target && target.closest ? target.closest("g.node") : null;
    model.set("selected", g && stage.contains(g) ? nodeId(g) : "");
    model.save_changes();
  };
  canvas.addEventListener("pointerdown", onDown);
  canvas.addEventListener("pointermove", onMove);
  canvas.addEventListener("pointerup", onUp);

  // --- classes on SVG nodes: highlight kinds and the selection
  const decorate = () => {
    const hl = model.get("highlight") || {};
    const sel = model.get("selected");
    for (const g of stage.querySelectorAll("g.node")) {
      const id = nodeId(g);
      for (const kind of KINDS) {
        g.classList.toggle("tg-hl-" + kind, (hl[kind] || []).includes(id));
      }
      g.classList.toggle("tg-selected", id === sel && sel !== "");
    }
  };
  const showSvg = () => {
    stage.innerHTML = model.get("svg");
    decorate();
    touched = false; // a new picture (the next cell's graph) is fitted afresh
    fit();
  };
  const showText = () => {
    details.textContent = model.get("details");
    details.style.display = model.get("details") ? "" : "none";
    summary.textContent = model.get("summary");
  };
  const syncControls = () => {
    view.value = model.get("view");
    for (const c of checks) c.sync();
  };

  showSvg();
  showText();
  const handlers = [
    ["change:svg", showSvg],
    ["change:highlight", decorate],
    ["change:selected", decorate],
    ["change:details", showText],
    ["change:summary", showText],
    ["change:view", syncControls],
    ["change:show_values", syncControls],
    ["change:show_grads", syncControls],
    ["change:collapse", syncControls],
    ["change:fold_to_fit", syncControls],
  ];
  for (const [name, fn] of handlers) model.on(name, fn);
  return () => {
    for (const [name, fn] of handlers) model.off(name, fn);
    canvas.removeEventListener("wheel", onWheel);
    clearTimeout(hintTimer);
    resized.disconnect();
  };
}

export default { render };
