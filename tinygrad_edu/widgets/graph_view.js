// GraphView front end (anywidget ES module; vendored, no imports, no build step).
//
// Python lays the graph out (dot -> SVG) and owns all state; this module only
// shows the SVG, pans/zooms it, applies highlight classes by node id, and sends
// the id of a clicked node back as the `selected` trait. Node ids are the DOT
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
  ];
  const reset = el("button", "tg-gv-reset", "reset view");
  const summary = el("span", "tg-gv-summary");
  bar.append(view, ...checks.map((c) => c.wrap), reset, summary);

  const body = el("div", "tg-gv-body");
  const canvas = el("div", "tg-gv-canvas");
  const stage = el("div", "tg-gv-stage");
  canvas.append(stage);
  const details = el("pre", "tg-gv-details");
  body.append(canvas, details);
  root.append(bar, body);

  // --- pan / zoom: a CSS transform on the stage, so the SVG is never re-laid out
  // Until the learner pans or zooms, each new picture is fitted to the canvas width.
  let tx = 0, ty = 0, scale = 1, touched = false, lastWidth = 0;
  const apply = () => { stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`; };
  const fit = () => {
    const w = stage.offsetWidth, h = stage.offsetHeight, cw = canvas.clientWidth;
    if (!w || !cw) return; // not in the page yet: the resize observer calls again
    tx = 0; ty = 0; scale = Math.min(1, cw / w);
    apply();
    canvas.style.height = Math.max(80, Math.ceil(h * scale) + 4) + "px";
  };
  const resetView = () => { touched = false; fit(); };
  reset.addEventListener("click", resetView);
  const resized = new ResizeObserver(() => {
    if (canvas.clientWidth !== lastWidth) {
      lastWidth = canvas.clientWidth;
      if (!touched) fit();
    }
  });
  resized.observe(canvas);

  const onWheel = (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const cx = ev.clientX - r.left, cy = ev.clientY - r.top;
    const factor = Math.exp(-ev.deltaY * 0.0015);
    const next = Math.min(8, Math.max(0.1, scale * factor));
    // keep the point under the cursor fixed while zooming
    tx = cx - (cx - tx) * (next / scale);
    ty = cy - (cy - ty) * (next / scale);
    scale = next;
    touched = true;
    apply();
  };
  canvas.addEventListener("wheel", onWheel, { passive: false });

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
    if (!touched) fit();
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
  ];
  for (const [name, fn] of handlers) model.on(name, fn);
  return () => {
    for (const [name, fn] of handlers) model.off(name, fn);
    canvas.removeEventListener("wheel", onWheel);
    resized.disconnect();
  };
}

export default { render };
