// The lineage page: search assets (columns grouped under their dataset), draw a layered lineage graph in SVG that
// fits its panel and zooms and pans, expand a dataset to its columns, trace a column up and down across processes,
// and show an entity's details (placeholders, classifications, labels and glossary terms, last run, column mappings,
// column lineage detail); with a running
// `ol2purview serve`, redraw a dataset's lineage for a time window from the run history (runs per process, a run's
// metadata, failed runs marked).
// No dependencies; every value from the catalog is inserted as text, never as HTML, and may be of any JSON type.
"use strict";

const API = "api/atlas/v2";
const PAGE = "_ol2purview/page";
const CLIENT_HEADER = {"X-Ol2purview-Client": "lineage-page"};  // the catalog's call counter leaves these out
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_W = 240, LINE_H = 16, GAP_X = 60, GAP_Y = 22, MARGIN = 16, ROW_H = 18, WRAP = 24;
const GAP_ACROSS = 28, GAP_DOWN = 46;  // the top-to-bottom layout: between nodes of a layer, between layers
// The view never shrinks the graph below MIN_SCALE (the smallest SVG text is 12 px: it stays readable, and a larger
// graph is panned) nor enlarges it beyond MAX_SCALE (a small graph fills the panel without giant boxes).
const MIN_SCALE = 1, MAX_SCALE = 2;
const BOX_W = 240, BOX_GAP = 200, EDGE_LABEL_MAX = 28;
const $ = (id) => document.getElementById(id);
const state = {mode: "none", lineage: null, expanded: new Map(), trace: null, view: null, window: null, history: null, base: null,
  selected: null};

// --- helpers -------------------------------------------------------------------------------------------------
function text(value) {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

async function request(path) {  // the page only reads
  const response = await fetch(path, {headers: CLIENT_HEADER});
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(text(data.errorMessage) || `HTTP ${response.status}`);
  return data;
}
const api = (path) => request(`${API}${path}`);
const page = (path) => request(`${PAGE}${path}`);

function el(tag, attrs = {}, content) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, text(value));
  if (content !== undefined) node.textContent = text(content);
  return node;
}

function status(message) { $("status").textContent = message; }

function displayName(entity) {
  const attributes = entity.attributes || {};
  return text(attributes.name) || text(entity.displayText) || text(attributes.qualifiedName);
}

const PLACEHOLDER_TYPE = "openlineage_dataset";  // what the connector writes when no mapping rule matched

function isPlaceholder(entity) {
  const attributes = entity.attributes || {};
  return entity.typeName === PLACEHOLDER_TYPE || "openlineageNamespace" in attributes;
}

function placeholderReason(entity) {
  const attributes = entity.attributes || {};
  return `Placeholder: no name-mapping rule matched OpenLineage namespace "${text(attributes.openlineageNamespace)}", ` +
    `name "${text(attributes.openlineageName)}", so ol2purview wrote this dataset itself instead of linking a ` +
    "scanned asset. Add a rule to config/OlToPurviewMappings.json (try it with qn-tester --explain).";
}

// Break a long name into lines at / . _ - boundaries (or hard), at most `max` lines, the last one ellipsized.
function wrap(name, width = WRAP, max = 3) {
  const lines = [];
  let rest = name;
  while (rest.length > width && lines.length < max - 1) {
    let cut = -1;
    for (const sep of ["/", ".", "_", "-", " ", ":", "#", "@"]) cut = Math.max(cut, rest.lastIndexOf(sep, width - 1));
    cut = cut > width / 3 ? cut + 1 : width;
    lines.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  lines.push(rest.length > width ? `${rest.slice(0, width - 1)}…` : rest);
  return lines;
}

// Node titles that never read alike: a name shared by several nodes gets enough of its qualifiedName to differ.
function distinctTitles(entities) {
  const byName = new Map();
  for (const [guid, entity] of entities) {
    const name = displayName(entity);
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name).push(guid);
  }
  const titles = new Map();
  for (const [name, guids] of byName) {
    if (guids.length === 1) { titles.set(guids[0], name); continue; }
    const parts = guids.map((g) => text(entities.get(g).attributes.qualifiedName).split("/"));
    let take = 1;
    while (take < Math.max(...parts.map((p) => p.length)) && new Set(parts.map((p) => p.slice(-take).join("/"))).size < guids.length) take++;
    guids.forEach((g, i) => titles.set(g, `${name} (…/${parts[i].slice(-take).join("/")})`));
  }
  return titles;
}

// --- zoom and pan ----------------------------------------------------------------------------------------------
// `focus`: the point (graph units) the view centres on when the graph is larger than the panel at MIN_SCALE.
function mountSvg(svg, width, height, focus) {
  const holder = $("graph");
  holder.replaceChildren(svg);
  state.view = {svg, width, height, x: 0, y: 0, w: width, h: height, focus: focus || [width / 2, height / 2]};
  fit();
}

function panelSize() {
  const box = $("graph").getBoundingClientRect();
  return [box.width || 800, box.height || 600];
}

// The scale at which a width x height graph fits the panel, within [MIN_SCALE, MAX_SCALE].
function fitScale(width, height) {
  const [pw, ph] = panelSize();
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, Math.min(pw / width, ph / height)));
}

function applyView() {
  const v = state.view;
  if (v) v.svg.setAttribute("viewBox", `${v.x} ${v.y} ${v.w} ${v.h}`);
}

function fit() {
  const v = state.view;
  if (!v) return;
  const [pw, ph] = panelSize();
  const scale = fitScale(v.width, v.height);
  v.svg.dataset.panel = `${Math.round(pw)}x${Math.round(ph)}`;  // the panel size the view was fitted to
  v.w = pw / scale;
  v.h = ph / scale;
  // centred on the graph where it fits; else on the focus (the base node), kept inside the graph
  const place = (size, view, focus) => (view >= size ? (size - view) / 2 : Math.min(size - view, Math.max(0, focus - view / 2)));
  v.x = place(v.width, v.w, v.focus[0]);
  v.y = place(v.height, v.h, v.focus[1]);
  applyView();
}

function zoom(factor, cx, cy) {
  const v = state.view;
  if (!v) return;
  const px = cx === undefined ? v.x + v.w / 2 : cx, py = cy === undefined ? v.y + v.h / 2 : cy;
  v.x = px - (px - v.x) * factor;
  v.y = py - (py - v.y) * factor;
  v.w *= factor;
  v.h *= factor;
  applyView();
}

function setupZoomAndPan() {
  const holder = $("graph");
  const toGraph = (event) => {
    const v = state.view, box = holder.getBoundingClientRect();
    return [v.x + (event.clientX - box.left) / box.width * v.w, v.y + (event.clientY - box.top) / box.height * v.h];
  };
  holder.addEventListener("wheel", (event) => {
    if (!state.view) return;
    event.preventDefault();
    const [x, y] = toGraph(event);
    zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, x, y);
  }, {passive: false});
  let drag = null;
  holder.addEventListener("pointerdown", (event) => {
    if (!state.view || event.target.closest(".node, .column-row, .col-dataset")) return;
    drag = {x: event.clientX, y: event.clientY, vx: state.view.x, vy: state.view.y};
    holder.classList.add("panning");
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const v = state.view, box = holder.getBoundingClientRect();
    v.x = drag.vx - (event.clientX - drag.x) / box.width * v.w;
    v.y = drag.vy - (event.clientY - drag.y) / box.height * v.h;
    applyView();
  });
  window.addEventListener("pointerup", () => { drag = null; holder.classList.remove("panning"); });
  $("zoom-fit").addEventListener("click", fit);
  $("zoom-in").addEventListener("click", () => zoom(1 / 1.25));
  $("zoom-out").addEventListener("click", () => zoom(1.25));
  // The panel changes size with the window and when the details panel opens: the view fits it again (a dataset
  // lineage is laid out again, since the better orientation may change).
  let panel = "";
  new ResizeObserver(() => {
    const [w, h] = panelSize(), size = `${Math.round(w)}x${Math.round(h)}`;
    if (size === panel) return;
    panel = size;
    if ((state.mode === "lineage" || state.mode === "history") && state.lineage) drawLineage();
    else fit();
  }).observe(holder);
}

function arrowDefs() {
  const defs = el("svg:defs");
  for (const [id, color] of [["arrow", "#8794a3"], ["arrow-indirect", "#b08a3e"]]) {
    const marker = el("svg:marker", {id, viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "8", markerHeight: "8", orient: "auto-start-reverse"});
    marker.append(el("svg:path", {d: "M 0 0 L 10 5 L 0 10 z", fill: color}));
    defs.append(marker);
  }
  return defs;
}

function curve(x1, y1, x2, y2) {
  const mid = (x1 + x2) / 2;
  return `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`;
}

function verticalCurve(x1, y1, x2, y2) {
  const mid = (y1 + y2) / 2;
  return `M ${x1} ${y1} C ${x1} ${mid}, ${x2} ${mid}, ${x2} ${y2}`;
}

// --- search ------------------------------------------------------------------------------------------------------
// One search result: the dataset (a click anywhere on it opens its lineage); its matching columns are listed apart,
// below it, as buttons that trace a column.
function resultItem(entity, onOpen) {
  const placeholder = isPlaceholder(entity);
  const item = el("div", {class: `result${placeholder ? " placeholder" : ""}`, tabindex: "0", role: "button", "data-guid": entity.guid,
    "data-qualified-name": entity.attributes.qualifiedName, "data-type-name": entity.typeName});
  item.append(el("div", {class: "name"}, displayName(entity)),
    el("div", {class: "type"}, `${entity.typeName}${placeholder ? " · placeholder" : ""}`),
    el("div", {class: "qn"}, entity.attributes.qualifiedName));
  item.addEventListener("click", (event) => { event.stopPropagation(); onOpen(); });
  item.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.stopPropagation(); onOpen(); } });
  return item;
}

async function search(keywords) {
  status("Searching…");
  try {
    const data = await page(`/search?q=${encodeURIComponent(keywords || "*")}`);
    const list = $("results");
    list.replaceChildren();
    for (const group of data.groups) {
      const item = el("li", {class: "result-group", "data-qualified-name": group.entity.attributes.qualifiedName});
      item.append(resultItem(group.entity, () => openLineage(group.entity.guid)));
      if (group.columns.length) {
        const columns = el("ul", {class: "result-columns", "aria-label": "matching columns"});
        columns.append(el("li", {class: "result-columns-title"}, "matching columns:"));
        for (const column of group.columns) {
          const row = el("li", {class: "result-column", tabindex: "0", role: "button", title: "trace this column",
            "data-guid": column.guid, "data-column": displayName(column)}, `⋮ ${displayName(column)}`);
          const trace = async (event) => {
            event.stopPropagation();
            await openLineage(group.entity.guid);
            await traceColumn(group.entity.guid, displayName(column));
          };
          row.addEventListener("click", trace);
          row.addEventListener("keydown", (event) => { if (event.key === "Enter") trace(event); });
          columns.append(row);
        }
        item.append(columns);
      }
      list.append(item);
    }
    status(`${data.count} match(es)${data.shown < data.count ? `, first ${data.shown} shown` : ""}.`);
  } catch (err) { status(`Search failed: ${err.message}`); }
}

// --- dataset lineage ---------------------------------------------------------------------------------------------
function classify(data) {
  // Relations connect a dataset and a process; from the base (whose kind we know) the kinds alternate.
  const processes = new Set(), adjacency = new Map();
  for (const r of data.relations) {
    for (const [a, b] of [[r.fromEntityId, r.toEntityId], [r.toEntityId, r.fromEntityId]]) {
      if (!adjacency.has(a)) adjacency.set(a, []);
      adjacency.get(a).push(b);
    }
  }
  const queue = [[data.baseEntityGuid, data.baseIsProcess]], seen = new Set([data.baseEntityGuid]);
  while (queue.length) {
    const [guid, proc] = queue.shift();
    if (proc) processes.add(guid);
    for (const next of adjacency.get(guid) || []) if (!seen.has(next)) { seen.add(next); queue.push([next, !proc]); }
  }
  return processes;
}

function layers(data) {
  // Layer = signed distance from the base along the direction of data flow.
  const out = new Map(), inc = new Map();
  for (const r of data.relations) {
    if (!out.has(r.fromEntityId)) out.set(r.fromEntityId, []);
    if (!inc.has(r.toEntityId)) inc.set(r.toEntityId, []);
    out.get(r.fromEntityId).push(r.toEntityId);
    inc.get(r.toEntityId).push(r.fromEntityId);
  }
  const layer = new Map([[data.baseEntityGuid, 0]]), queue = [data.baseEntityGuid];
  while (queue.length) {
    const guid = queue.shift();
    for (const next of out.get(guid) || []) if (!layer.has(next)) { layer.set(next, layer.get(guid) + 1); queue.push(next); }
    for (const prev of inc.get(guid) || []) if (!layer.has(prev)) { layer.set(prev, layer.get(guid) - 1); queue.push(prev); }
  }
  for (const guid of Object.keys(data.guidEntityMap)) if (!layer.has(guid)) layer.set(guid, 0);
  return {layer, inc};
}

const TOGGLE_H = 16;  // the "columns" line of a dataset node

function nodeHeight(lines, guid, dataset) {
  const columns = state.expanded.get(guid);
  return 14 + lines * LINE_H + 18 + (dataset ? TOGGLE_H : 0) + (columns ? 4 + Math.max(columns.length, 1) * ROW_H : 0);
}

function drawLineage() {
  const data = state.lineage;
  const processes = classify(data);
  const {layer, inc} = layers(data);
  const entities = new Map(Object.entries(data.guidEntityMap));
  const titles = distinctTitles(entities);
  const byLayer = new Map();
  for (const [guid, l] of layer) { if (!byLayer.has(l)) byLayer.set(l, []); byLayer.get(l).push(guid); }
  const order = [...byLayer.keys()].sort((a, b) => a - b);
  const layout = (vertical) => layoutLayers(order, byLayer, inc, titles, processes, vertical);
  // left to right, unless top to bottom shows the graph larger in this panel (a deep, narrow graph)
  const across = layout(false), down = layout(true);
  const {pos, width, height, vertical} = fitScale(down.width, down.height) > fitScale(across.width, across.height) * 1.05 ? down : across;
  const svg = el("svg:svg", {role: "img", "aria-label": "lineage graph", preserveAspectRatio: "xMidYMid meet",
    "data-layout": vertical ? "top-to-bottom" : "left-to-right"});
  svg.append(arrowDefs());
  for (const r of data.relations) {
    const a = pos.get(r.fromEntityId), b = pos.get(r.toEntityId);
    if (!a || !b) continue;
    const d = vertical ? verticalCurve(a.x + NODE_W / 2, a.y + a.h, b.x + NODE_W / 2, b.y) : curve(a.x + NODE_W, a.y + 22, b.x, b.y + 22);
    svg.append(el("svg:path", {class: "edge", d, "marker-end": "url(#arrow)", "data-from": r.fromEntityId, "data-to": r.toEntityId}));
  }
  for (const [guid, p] of pos) {
    const entity = entities.get(guid);
    const kind = processes.has(guid) ? "process" : "dataset";
    const classes = ["node", kind];
    if (guid === data.baseEntityGuid) classes.push("base");
    if (kind === "dataset" && isPlaceholder(entity)) classes.push("placeholder");
    const runs = entity.history ? entity.history.runs : null;  // lineage in a time window: the process's runs
    if (runs && runs.some((r) => FAILED.has(r.status))) classes.push("failed");
    if (guid === state.selected) classes.push("selected");  // last, as showDetails adds it
    const g = el("svg:g", {class: classes.join(" "), transform: `translate(${p.x},${p.y})`, tabindex: "0",
      "data-guid": guid, "data-qualified-name": entity.attributes.qualifiedName, "data-type-name": entity.typeName});
    g.append(el("svg:title", {}, `${text(entity.attributes.qualifiedName)}\n${entity.typeName}`));
    g.append(el("svg:rect", {width: NODE_W, height: p.h, rx: kind === "process" ? 16 : 3}));
    const label = el("svg:text", {class: "label", x: 10, y: 20});
    p.lines.forEach((line, i) => label.append(el("svg:tspan", {x: 10, dy: i ? LINE_H : 0}, line)));
    g.append(label);
    const typeLine = runs ? runsLine(entity.history) : `${entity.typeName}${classes.includes("placeholder") ? " · placeholder" : ""}`;
    g.append(el("svg:text", {class: "kind", x: 10, y: 20 + p.lines.length * LINE_H + 4}, typeLine.length > 34 ? `${typeLine.slice(0, 33)}…` : typeLine));
    g.addEventListener("click", () => showDetails(guid));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter") showDetails(guid); });
    if (kind === "dataset" && state.mode !== "history") drawColumnToggle(g, guid, p);
    svg.append(g);
  }
  const base = pos.get(data.baseEntityGuid);
  mountSvg(svg, width, height, base ? [base.x + NODE_W / 2, base.y + base.h / 2] : undefined);
}

// Node positions by layer (the signed distance from the base), nodes of a layer ordered by the mean position of
// their inputs (fewer crossings), then by title. Left to right: a layer is a column; top to bottom: a row, centred.
function layoutLayers(order, byLayer, inc, titles, processes, vertical) {
  const pos = new Map(), middle = new Map(), rows = [];
  let along = MARGIN, acrossMax = 0;
  for (const l of order) {
    const guids = [...byLayer.get(l)];
    const center = (g) => {
      const at = (inc.get(g) || []).filter((p) => middle.has(p)).map((p) => middle.get(p));
      return at.length ? at.reduce((a, b) => a + b, 0) / at.length : Infinity;
    };
    guids.sort((a, b) => (center(a) - center(b)) || titles.get(a).toLowerCase().localeCompare(titles.get(b).toLowerCase()));
    let across = MARGIN, thickness = 0;
    const row = [];
    for (const g of guids) {
      const lines = wrap(titles.get(g));
      const h = nodeHeight(lines.length, g, !processes.has(g));
      const p = vertical ? {x: across, y: along, h, lines} : {x: along, y: across, h, lines};
      pos.set(g, p);
      row.push(p);
      middle.set(g, across + (vertical ? NODE_W : h) / 2);
      across += vertical ? NODE_W + GAP_ACROSS : h + GAP_Y;
      thickness = Math.max(thickness, vertical ? h : NODE_W);
    }
    rows.push([row, across]);
    acrossMax = Math.max(acrossMax, across);
    along += thickness + (vertical ? GAP_DOWN : GAP_X);
  }
  if (vertical) for (const [row, across] of rows) for (const p of row) p.x += (acrossMax - across) / 2;
  const alongSize = along - (vertical ? GAP_DOWN : GAP_X) + MARGIN, acrossSize = acrossMax - (vertical ? GAP_ACROSS : GAP_Y) + MARGIN;
  return vertical ? {pos, width: acrossSize, height: alongSize, vertical} : {pos, width: alongSize, height: acrossSize, vertical};
}

function drawColumnToggle(g, guid, p) {
  const columns = state.expanded.get(guid);
  const toggleY = 20 + p.lines.length * LINE_H + 4 + TOGGLE_H;
  const top = toggleY + 4;
  const toggle = el("svg:text", {class: "column-toggle", x: 10, y: toggleY, tabindex: "0", "data-guid": guid},
    columns ? `▾ hide ${columns.length} column(s)` : "▸ show columns");
  const flip = (event) => { event.stopPropagation(); toggleColumns(guid); };
  toggle.addEventListener("click", flip);
  toggle.addEventListener("keydown", (e) => { if (e.key === "Enter") flip(e); });
  g.append(toggle);
  if (!columns) return;
  if (!columns.length) g.append(el("svg:text", {class: "column-row empty", x: 12, y: top + ROW_H - 4}, "no known columns"));
  columns.forEach((column, i) => {
    const row = el("svg:text", {class: `column-row${column.inSchema ? "" : " lineage-only"}`, x: 12, y: top + (i + 1) * ROW_H - 4,
      tabindex: "0", "data-dataset": guid, "data-column": column.name}, column.name.length > 30 ? `${column.name.slice(0, 29)}…` : column.name);
    row.append(el("svg:title", {}, `${column.name}${column.inSchema ? "" : " (known from column lineage only)"} — click to trace`));
    const trace = (event) => { event.stopPropagation(); traceColumn(guid, column.name); };
    row.addEventListener("click", trace);
    row.addEventListener("keydown", (e) => { if (e.key === "Enter") trace(e); });
    g.append(row);
  });
}

async function datasetColumns(guid) {
  return (await page(`/columns?guid=${encodeURIComponent(guid)}`)).columns;
}

async function toggleColumns(guid) {
  if (state.expanded.has(guid)) state.expanded.delete(guid);
  else {
    try { state.expanded.set(guid, await datasetColumns(guid)); } catch (err) { status(`Columns failed: ${err.message}`); return; }
  }
  drawLineage();
}

async function openLineage(guid) {
  const depth = $("depth").value, direction = $("direction").value;
  history.replaceState(null, "", `#guid=${encodeURIComponent(guid)}&depth=${depth}&direction=${direction}`);
  status("Loading lineage…");
  try {
    const [data, base] = await Promise.all([
      api(`/lineage/${encodeURIComponent(guid)}?direction=${direction}&depth=${depth}`),
      api(`/entity/guid/${encodeURIComponent(guid)}?ignoreRelationships=true`)]);
    // Process types carry inputs/outputs (Process's attributes); datasets never do.
    data.baseIsProcess = "inputs" in base.entity.attributes || "outputs" in base.entity.attributes;
    if (!state.lineage || state.lineage.baseEntityGuid !== guid) state.expanded = new Map();
    state.base = {guid, qualifiedName: text(base.entity.attributes.qualifiedName), isProcess: data.baseIsProcess,
      name: displayName(data.guidEntityMap[guid] || base.entity)};
    if (state.window && !data.baseIsProcess) { await drawHistory(); return; }
    state.lineage = data;
    state.mode = "lineage";
    $("graph-title").textContent = `Lineage of ${displayName(data.guidEntityMap[guid] || base.entity)}`;
    $("back-to-lineage").hidden = true;
    drawLineage();
    status(`${Object.keys(data.guidEntityMap).length} node(s), ${data.relations.length} edge(s).`);
    await showDetails(guid);
  } catch (err) { status(`Lineage failed: ${err.message}`); }
}

// --- column lineage ----------------------------------------------------------------------------------------------
const TRACE_DIRECTION = {BOTH: "both", INPUT: "up", OUTPUT: "down"};

async function traceColumn(guid, column) {
  const direction = TRACE_DIRECTION[$("direction").value], depth = $("depth").value;
  status(`Tracing ${column}…`);
  try {
    const trace = await page(`/column-lineage?guid=${encodeURIComponent(guid)}&column=${encodeURIComponent(column)}` +
      `&direction=${direction}&depth=${depth}`);
    state.trace = trace;
    state.mode = "columns";
    $("graph-title").textContent = `Column lineage of ${trace.root.column} in ${shortName(trace.root.dataset)}`;
    $("back-to-lineage").hidden = !state.lineage;
    drawColumnGraph(trace);
    const indirect = trace.datasets.filter((d) => d.indirectOnly).length;
    status(`${trace.columns.length - 1} related column(s), ${trace.edges.length} edge(s) across ${trace.processes.length} process(es)` +
      `${indirect ? `; ${indirect} dataset(s) influence it only indirectly` : ""}.`);
  } catch (err) { status(`Column lineage failed: ${err.message}`); }
}

function shortName(qualifiedName) {
  const parts = text(qualifiedName).split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : text(qualifiedName);
}

function drawColumnGraph(trace) {
  const byDistance = new Map();
  for (const dataset of trace.datasets) {
    if (!byDistance.has(dataset.distance)) byDistance.set(dataset.distance, []);
    byDistance.get(dataset.distance).push(dataset);
  }
  const order = [...byDistance.keys()].sort((a, b) => a - b);
  const rows = new Map(), boxes = [];
  let height = 0;
  const processNames = new Map(trace.processes.map((p) => [p.guid, text(p.name) || text(p.qualifiedName)]));
  const titles = distinctTitles(new Map(trace.datasets.map((d) => [d.qualifiedName,
    {attributes: {name: text(d.name) || shortName(d.qualifiedName), qualifiedName: d.qualifiedName}}])));
  order.forEach((distance, column) => {
    let y = MARGIN;
    for (const dataset of byDistance.get(distance)) {
      const title = wrap(titles.get(dataset.qualifiedName), 30, 2);
      const head = 12 + title.length * LINE_H + 18;
      const columns = dataset.columns.filter((c) => c !== "*");
      const h = head + Math.max(columns.length, 0) * ROW_H + 8;
      const x = MARGIN + column * (BOX_W + BOX_GAP);
      boxes.push({dataset, x, y, h, head, title, columns});
      rows.set(`${dataset.qualifiedName}\u0000*`, {x, y: y + head / 2, w: BOX_W});
      columns.forEach((c, i) => rows.set(`${dataset.qualifiedName}\u0000${c}`, {x, y: y + head + i * ROW_H + ROW_H / 2, w: BOX_W}));
      y += h + GAP_Y;
    }
    height = Math.max(height, y + MARGIN);
  });
  const width = MARGIN * 2 + order.length * (BOX_W + BOX_GAP) - BOX_GAP;
  const svg = el("svg:svg", {role: "img", "aria-label": "column lineage graph", preserveAspectRatio: "xMidYMid meet"});
  svg.append(arrowDefs());
  for (const box of boxes) {
    const d = box.dataset;
    const classes = ["col-dataset"];
    if (d.distance === 0) classes.push("root");
    if (d.indirectOnly) classes.push("indirect-only");
    if (d.typeName === PLACEHOLDER_TYPE) classes.push("placeholder");
    const g = el("svg:g", {class: classes.join(" "), transform: `translate(${box.x},${box.y})`, "data-qualified-name": d.qualifiedName,
      "data-guid": d.guid});
    g.append(el("svg:title", {}, `${d.qualifiedName}\n${d.typeName}${d.indirectOnly ? "\ninfluences the column only indirectly" : ""}`));
    g.append(el("svg:rect", {width: BOX_W, height: box.h, rx: 4}));
    const label = el("svg:text", {class: "label", x: 10, y: 18});
    box.title.forEach((line, i) => label.append(el("svg:tspan", {x: 10, dy: i ? LINE_H : 0}, line)));
    g.append(label);
    g.append(el("svg:text", {class: "kind", x: 10, y: 18 + box.title.length * LINE_H + 2},
      d.indirectOnly ? "indirect influence only" : `${text(d.typeName)}${d.typeName === PLACEHOLDER_TYPE ? " · placeholder" : ""}`));
    box.columns.forEach((c, i) => {
      const isRoot = d.distance === 0 && c === state.trace.root.column;
      const row = el("svg:text", {class: `column-row${isRoot ? " traced" : ""}`, x: 12, y: box.head + i * ROW_H + ROW_H - 5,
        tabindex: "0", "data-dataset": d.qualifiedName, "data-column": c}, c.length > 34 ? `${c.slice(0, 33)}…` : c);
      if (d.guid) {
        const retrace = (event) => { event.stopPropagation(); traceColumn(d.guid, c); };
        row.addEventListener("click", retrace);
        row.addEventListener("keydown", (e) => { if (e.key === "Enter") retrace(e); });
      }
      g.append(row);
    });
    if (d.guid) g.addEventListener("click", () => showDetails(d.guid));
    svg.append(g);
  }
  const leaving = new Map();  // labels of edges leaving one row are stacked, not drawn over each other
  for (const edge of trace.edges) {
    const a = rows.get(`${edge.from.dataset}\u0000${edge.from.column}`), b = rows.get(`${edge.to.dataset}\u0000${edge.to.column}`);
    if (!a || !b) continue;
    const x1 = a.x + a.w, x2 = b.x, classes = ["column-edge"];
    if (edge.indirect) classes.push("indirect");
    if (edge.datasetLevel) classes.push("dataset-level");
    const label = `${edge.label}${edge.datasetLevel ? " (whole dataset)" : ""}`;
    const path = el("svg:path", {class: classes.join(" "), d: curve(x1, a.y, x2, b.y), "marker-end": edge.indirect ? "url(#arrow-indirect)" : "url(#arrow)",
      "data-from": `${edge.from.dataset}.${edge.from.column}`, "data-to": `${edge.to.dataset}.${edge.to.column}`, "data-label": label});
    path.append(el("svg:title", {}, `${edge.from.column} → ${edge.to.column}: ${label}\nvia ${processNames.get(edge.process) || edge.process}`));
    svg.append(path);
    const shown = label.length > EDGE_LABEL_MAX ? `${label.slice(0, EDGE_LABEL_MAX - 1)}…` : label;
    const key = `${edge.from.dataset}\u0000${edge.from.column}`;
    const stacked = leaving.get(key) || 0;
    leaving.set(key, stacked + 1);
    svg.append(el("svg:text", {class: `edge-label${edge.indirect ? " indirect" : ""}`, x: x1 + 6, y: a.y - 3 + stacked * 11,
      "data-from": `${edge.from.dataset}.${edge.from.column}`, "data-to": `${edge.to.dataset}.${edge.to.column}`}, shown));
  }
  const root = boxes.find((b) => b.dataset.distance === 0);
  mountSvg(svg, width, height, root ? [root.x + BOX_W / 2, root.y + root.h / 2] : undefined);
}

// --- details -----------------------------------------------------------------------------------------------------
function table(className, headings, rows) {
  const box = el("table", {class: className});
  const head = el("tr");
  for (const title of headings) head.append(el("th", {}, title));
  box.append(head);
  for (const values of rows) {
    const row = el("tr", {class: `${className}-row`});
    for (const value of values) row.append(el("td", {}, value));
    box.append(row);
  }
  return box;
}

function parsed(raw) {
  try { return JSON.parse(text(raw)); } catch { return undefined; }
}

function columnMappingTable(raw) {
  const mappings = parsed(raw);
  if (!Array.isArray(mappings)) return el("p", {class: "warning"}, "columnMapping is not a JSON list.");
  const rows = [];
  for (const mapping of mappings) {
    const datasets = (mapping && mapping.DatasetMapping) || {};
    for (const column of (mapping && mapping.ColumnMapping) || []) rows.push([datasets.Source, datasets.Sink, column && column.Source, column && column.Sink]);
  }
  if (!rows.length) return null;  // a process with no inputs maps no columns: no empty table
  const box = el("div");
  box.append(el("h3", {}, "Column mappings (DIRECT)"), table("column-mapping", ["Source dataset", "Sink dataset", "Source column", "Sink column"], rows));
  return box;
}

function transformationsText(list) {
  if (!Array.isArray(list) || !list.length) return "DIRECT";
  const direct = (t) => (t && t.type === "DIRECT" ? 0 : 1);
  return [...list].sort((a, b) => direct(a) - direct(b)).map((t) => {
    const kind = text(t && t.type);
    const subtype = text(t && t.subtype);
    const base = kind === "DIRECT" ? (subtype || "DIRECT") : `${kind} ${subtype}`.trim();
    return `${base}${t && t.masking ? " (masked)" : ""}${t && t.description ? ` — ${text(t.description)}` : ""}`;
  }).join(", ");
}

function columnLineageDetailTable(raw) {
  const detail = parsed(raw);
  if (!detail || typeof detail !== "object") return el("p", {class: "warning"}, "columnLineageDetail is not JSON.");
  const rows = [];
  for (const field of Array.isArray(detail.fields) ? detail.fields : []) {
    for (const input of Array.isArray(field && field.inputFields) ? field.inputFields : []) {
      rows.push([field.field, input && input.qualifiedName, input && input.field, transformationsText(input && input.transformations)]);
    }
  }
  for (const input of Array.isArray(detail.dataset) ? detail.dataset : []) {
    rows.push(["(every column)", input && input.qualifiedName, input && input.field, transformationsText(input && input.transformations)]);
  }
  if (!rows.length) return null;
  const box = el("div");
  box.append(el("h3", {}, "Column lineage detail (DIRECT and INDIRECT)"),
    table("column-lineage-detail", ["Sink column", "Source dataset", "Source column", "Transformations"], rows));
  return box;
}

function lastRun(attributes) {
  if (!("lastRunTime" in attributes) && !("lastRunStatus" in attributes)) return null;
  const items = [["Ended", text(attributes.lastRunTime)], ["Status", text(attributes.lastRunStatus)],
    ["User", text(attributes.lastRunUser) || "(unknown)"], ["Run id", text(attributes.lastRunId)]];
  let duration = null;
  if (typeof attributes.lastRunDurationMs === "number") duration = attributes.lastRunDurationMs / 1000;
  else if (attributes.lastRunStartTime && attributes.lastRunTime) {
    const seconds = (Date.parse(text(attributes.lastRunTime)) - Date.parse(text(attributes.lastRunStartTime))) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) duration = seconds;
  }
  items.push(["Duration", duration === null ? "unknown" : `${duration.toFixed(1)} s`]);
  const box = el("dl", {class: "last-run"});
  for (const [key, value] of items) box.append(el("dt", {}, key), el("dd", {"data-field": key}, value));
  return box;
}

// An entity's attributes as the page shows them: its attributes, plus what it keeps as business attributes of the
// group "ol2purview" (a process's run metadata on a type the connector must not change), never over a real attribute.
// tools/catalog/page.py shown_attributes does the same for the page's routes.
function shownAttributes(entity) {
  const kept = (entity.businessAttributes || {}).ol2purview || {};
  return {...kept, ...(entity.attributes || {})};
}

// What governs an entity (the page's governance route): its classifications, its own first, then those propagated
// to it with the entity each comes from; its labels; the glossary terms assigned to it, with their glossary.
function governanceBox(found) {
  const parts = [];
  const classifications = Array.isArray(found.classifications) ? found.classifications : [];
  if (classifications.length) {
    const list = el("ul", {class: "classification-list"});
    for (const c of classifications) {
      const item = el("li", {class: c.from ? "classification propagated" : "classification", "data-type-name": c.typeName});
      item.append(el("span", {class: "classification-name"}, c.typeName));
      const values = Object.entries(c.attributes || {}).map(([key, value]) => `${key}=${text(value)}`).join(", ");
      if (values) item.append(el("span", {class: "classification-attributes"}, ` (${values})`));
      if (c.from) item.append(el("span", {class: "classification-source"}, ` · propagated from ${text(c.from.name)}`));
      list.append(item);
    }
    parts.push(el("h3", {}, "Classifications"), list);
  }
  const labels = Array.isArray(found.labels) ? found.labels : [];
  if (labels.length) {
    const list = el("ul", {class: "label-list"});
    for (const label of labels) list.append(el("li", {class: "label-chip"}, label));
    parts.push(el("h3", {}, "Labels"), list);
  }
  const terms = Array.isArray(found.terms) ? found.terms : [];
  if (terms.length) {
    const list = el("ul", {class: "term-list"});
    for (const term of terms) {
      const item = el("li", {class: "term", "data-term-guid": term.guid});
      item.append(el("span", {class: "term-name"}, term.name));
      if (term.glossary) item.append(el("span", {class: "term-glossary"}, ` · ${text(term.glossary)}`));
      list.append(item);
    }
    parts.push(el("h3", {}, "Glossary terms"), list);
  }
  return parts;
}

async function showDetails(guid) {
  document.querySelectorAll(".node.selected").forEach((n) => n.classList.remove("selected"));
  state.selected = guid;
  const node = document.querySelector(`.node[data-guid="${CSS.escape(guid)}"]`);
  if (node) node.classList.add("selected");
  if (state.mode === "history") { showHistoryDetails(guid); return; }
  $("runs-in-window").replaceChildren();
  $("run-details").replaceChildren();
  $("details-open").hidden = false;
  $("attributes-title").hidden = false;
  try {
    const [{entity}, governed] = await Promise.all([
      api(`/entity/guid/${encodeURIComponent(guid)}?ignoreRelationships=true`),
      page(`/governance?guid=${encodeURIComponent(guid)}`),
    ]);
    const attributes = shownAttributes(entity);
    const panel = $("details-panel");
    panel.hidden = false;
    panel.dataset.guid = guid;
    $("details-title").textContent = displayName(entity);
    const summary = $("details-summary");
    summary.replaceChildren();
    for (const [key, value] of [["Type", entity.typeName], ["qualifiedName", attributes.qualifiedName], ["guid", entity.guid], ["Status", entity.status], ["Collection", entity.collectionId]]) {
      if (value !== undefined) summary.append(el("dt", {}, key), el("dd", {"data-field": key}, value));
    }
    $("placeholder-notice").replaceChildren(...(isPlaceholder(entity) ? [el("p", {class: "placeholder-reason"}, placeholderReason(entity))] : []));
    $("governance").replaceChildren(...governanceBox(governed));
    const run = lastRun(attributes);
    $("last-run").replaceChildren(...(run ? [el("h3", {}, "Last run"), run] : []));
    const lineage = [];
    if (attributes.columnMapping) lineage.push(columnMappingTable(attributes.columnMapping));
    if (attributes.columnLineageDetail) lineage.push(columnLineageDetailTable(attributes.columnLineageDetail));
    $("column-mapping").replaceChildren(...lineage.filter(Boolean));
    $("dataset-columns").replaceChildren();
    if (!("inputs" in attributes) && !("outputs" in attributes)) showColumnList(guid);
    const body = $("details-attributes").tBodies[0];
    body.replaceChildren();
    const shownElsewhere = new Set(["columnMapping", "columnLineageDetail", "qualifiedName"]);
    for (const [key, value] of Object.entries(attributes)) {
      if (shownElsewhere.has(key)) continue;
      const shown = typeof value === "object" && value !== null
        ? (Array.isArray(value) ? value : [value]).map((v) => (v && v.uniqueAttributes ? text(v.uniqueAttributes.qualifiedName) : text(v))).join("\n")
        : text(value);
      const row = el("tr");
      row.append(el("th", {}, key), el("td", {}, shown));
      body.append(row);
    }
  } catch (err) { status(`Could not load the entity: ${err.message}`); }
}

async function showColumnList(guid) {
  try {
    const columns = await datasetColumns(guid);
    if ($("details-panel").dataset.guid !== guid) return;
    const box = $("dataset-columns");
    box.replaceChildren(el("h3", {}, `Columns (${columns.length})`));
    const list = el("ul", {class: "column-list"});
    for (const column of columns) {
      const button = el("button", {type: "button", class: "trace-column", "data-column": column.name},
        `${column.name}${column.inSchema ? "" : " · lineage only"}`);
      button.addEventListener("click", () => traceColumn(guid, column.name));
      const item = el("li");
      item.append(button);
      list.append(item);
    }
    box.append(columns.length ? list : el("p", {}, "No columns known (no schema and no column lineage)."));
  } catch (err) { status(`Columns failed: ${err.message}`); }
}

// --- lineage in a time window (the run history of a running ol2purview serve) -------------------------------
// The catalog server asks serve's history endpoints itself (with the function key), so no key reaches the page.
const HISTORY = "_ol2purview/page/history";
const HISTORY_DIRECTION = {BOTH: "both", INPUT: "upstream", OUTPUT: "downstream"};
const FAILED = new Set(["FAIL", "ABORT"]);

function runsLine(process) {
  const failed = process.runs.filter((r) => FAILED.has(r.status)).length;
  return `${process.runCount} run(s)${failed ? `, ${failed} failed` : ""}`;
}

function localValue(iso) {  // the answer's UTC time as a datetime-local value (read back as UTC by utc())
  return text(iso).replace(/(\.\d+)?Z$/, "");
}

function utc(value) {  // a datetime-local value, read as UTC
  if (!value) return "";
  return `${value.length === 16 ? `${value}:00` : value}Z`;
}

async function setupTimeWindow() {
  const bar = $("time-window");
  let answer = {available: false, reason: "the catalog could not tell"};
  try { answer = await request(`${HISTORY}/status`); } catch (err) { answer.reason = err.message; }
  bar.hidden = false;
  bar.dataset.available = String(Boolean(answer.available));
  for (const control of bar.querySelectorAll("input, button")) control.disabled = !answer.available;
  $("window-note").textContent = answer.available ? "" : "needs a running ol2purview serve";
  $("window-note").title = answer.reason || "";
  const choose = (window, button) => {
    bar.querySelectorAll("button.active").forEach((b) => b.classList.remove("active"));
    if (button) button.classList.add("active");
    applyWindow(window);
  };
  $("window-apply").addEventListener("click", (e) => choose({since: utc($("window-since").value), until: utc($("window-until").value)}, e.target));
  for (const button of bar.querySelectorAll("button[data-window]")) {
    const name = button.dataset.window;
    button.addEventListener("click", () => choose(name === "last-run" ? {since: "last-run", until: ""} : {since: `-${name}`, until: "now"}, button));
  }
  $("window-clear").addEventListener("click", () => {
    bar.querySelectorAll("button.active").forEach((b) => b.classList.remove("active"));
    state.window = null;
    state.history = null;
    if (state.base) openLineage(state.base.guid);
  });
}

async function applyWindow(window) {
  state.window = window;
  if (state.base && !state.base.isProcess) await drawHistory();
  else status("Open a dataset's lineage first: the time window redraws it.");
}

function historyGraph(answer) {
  // The history answer in the shape drawLineage reads (the catalog's lineage): node ids are "h:" + qualifiedName.
  const id = (qualifiedName) => `h:${qualifiedName}`;
  const guidEntityMap = {};
  for (const d of answer.datasets) {
    guidEntityMap[id(d.qualifiedName)] = {guid: id(d.qualifiedName), typeName: d.typeName || "DataSet",
      attributes: {qualifiedName: d.qualifiedName, name: d.name || shortName(d.qualifiedName)}};  // name: Purview's
  }
  for (const p of answer.processes) {
    guidEntityMap[id(p.qualifiedName)] = {guid: id(p.qualifiedName), typeName: p.typeName,
      attributes: {qualifiedName: p.qualifiedName, name: p.name || shortName(p.qualifiedName)}, history: p};
  }
  const relations = answer.edges.map((e) => ({fromEntityId: id(e.from), toEntityId: id(e.to), history: e}));
  return {baseEntityGuid: id(answer.qualifiedName), baseIsProcess: false, guidEntityMap, relations};
}

async function drawHistory() {
  const params = new URLSearchParams({qualifiedName: state.base.qualifiedName,
    direction: HISTORY_DIRECTION[$("direction").value], depth: $("depth").value === "0" ? "10" : $("depth").value});
  if (state.window.since) params.set("since", state.window.since);
  if (state.window.until) params.set("until", state.window.until);
  status("Loading the lineage of the time window…");
  try {
    const answer = await request(`${HISTORY}/lineage?${params}`);
    state.history = answer;
    state.lineage = historyGraph(answer);
    state.mode = "history";
    // the dataset's name as the catalog's lineage titles it (a resource set's last segment is `{SparkPartitions}`)
    $("graph-title").textContent = `Lineage of ${state.base.name || shortName(answer.qualifiedName)} from ${answer.since} to ${answer.until}`;
    $("window-since").value = localValue(answer.since);  // a quick choice (7 days, last run) shows the window it chose
    $("window-until").value = localValue(answer.until);
    $("back-to-lineage").hidden = true;
    drawLineage();
    const runs = new Set(answer.processes.flatMap((p) => p.runs.map((r) => r.runId)));
    const failed = new Set(answer.processes.flatMap((p) => p.runs.filter((r) => FAILED.has(r.status)).map((r) => r.runId)));
    status(`${answer.datasets.length} dataset(s), ${answer.processes.length} process(es), ${runs.size} run(s)` +
      `${failed.size ? ` (${failed.size} failed)` : ""} from ${answer.since} to ${answer.until}` +
      `${answer.truncated ? `; cut short: ${answer.truncated}` : ""}.`);
    showDetails(state.lineage.baseEntityGuid);
  } catch (err) { status(`Lineage over time failed: ${err.message}`); }
}

function historyRuns(process) {
  const box = el("div");
  box.append(el("h3", {}, `Runs in the window (${process.runCount})`));
  const runs = el("table", {class: "runs-table"});
  const head = el("tr");
  for (const title of ["Run", "Status", "Start", "End", "Duration", "User", "Run by"]) head.append(el("th", {}, title));
  runs.append(head);
  for (const run of process.runs) {
    const kind = FAILED.has(run.status) ? " run-failed" : run.end === null ? " run-open" : "";
    const row = el("tr", {class: `run-row${kind}`, "data-run-id": run.runId, "data-status": run.status});
    const cell = el("td");
    const button = el("button", {type: "button", class: "run-link", title: run.runId}, run.runId.slice(-12));
    button.addEventListener("click", () => showRun(run.runId));
    cell.append(button);
    row.append(cell, el("td", {}, run.status), el("td", {}, run.start), el("td", {}, run.end || "(no end: may still run)"),
      el("td", {}, run.durationMs === null ? "" : `${(run.durationMs / 1000).toFixed(1)} s`), el("td", {}, run.user || ""),
      el("td", {"data-field": "runBy"}, run.runBy || ""));
    runs.append(row);
  }
  box.append(runs);
  return box;
}

function showHistoryDetails(guid) {
  const entity = state.lineage.guidEntityMap[guid];
  if (!entity) return;
  const panel = $("details-panel");
  panel.hidden = false;
  panel.dataset.guid = guid;
  $("details-title").textContent = displayName(entity);
  const summary = $("details-summary");
  summary.replaceChildren();
  const touching = state.history.edges.filter((e) => e.from === entity.attributes.qualifiedName || e.to === entity.attributes.qualifiedName);
  // the window's edges are the graph's (one drawn edge each); this node's own are counted apart
  for (const [key, value] of [["Type", entity.typeName], ["qualifiedName", entity.attributes.qualifiedName],
    ["Window", `${state.history.since} to ${state.history.until}`], ["Edges in the window", String(state.history.edges.length)],
    ["Edges of this node", String(touching.length)]]) {
    summary.append(el("dt", {}, key), el("dd", {}, value));
  }
  for (const id of ["placeholder-notice", "governance", "last-run", "dataset-columns", "column-mapping", "run-details"]) $(id).replaceChildren();
  $("details-attributes").tBodies[0].replaceChildren();
  $("attributes-title").hidden = true;
  $("details-open").hidden = true;
  $("runs-in-window").replaceChildren(...(entity.history ? [historyRuns(entity.history)] : []));
}

async function showRun(runId) {
  try {
    const run = await request(`${HISTORY}/runs/${encodeURIComponent(runId)}`);
    const box = $("run-details");
    const fields = [["Run id", run.runId], ["Status", run.status], ["Start", run.start], ["End", run.end || "(no end: may still run)"],
      ["Duration", run.durationMs === null ? "unknown" : `${(run.durationMs / 1000).toFixed(1)} s`], ["User", run.user || "(unknown)"],
      ["Job", run.job], ["Owner", run.owner], ["Run by", (run.metadata || {}).runBy || "(nothing recorded)"]];
    const shown = new Set(["startTime", "endTime", "durationMs", "user", "runBy"]);
    for (const [key, value] of Object.entries(run.metadata || {})) if (!shown.has(key)) fields.push([key, text(value)]);
    const list = el("dl", {class: "run-metadata", "data-run-id": run.runId});
    for (const [key, value] of fields) list.append(el("dt", {}, key), el("dd", {"data-field": key}, value));
    box.replaceChildren(el("h3", {}, `Run ${run.runId}`), list,
      table("run-accesses", ["Dataset", "Access", "Process"], run.accesses.map((a) => [a.dataset, a.access, a.process])));
  } catch (err) { status(`Run failed to load: ${err.message}`); }
}

function start() {
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); search($("search-input").value.trim()); });
  $("details-open").addEventListener("click", () => openLineage($("details-panel").dataset.guid));
  $("back-to-lineage").addEventListener("click", () => { if (state.base) openLineage(state.base.guid); });
  for (const id of ["depth", "direction"]) {
    $(id).addEventListener("change", () => {
      if (state.mode === "columns" && state.trace && state.trace.datasets.find((d) => d.distance === 0)) {
        const root = state.trace.datasets.find((d) => d.distance === 0);
        if (root.guid) traceColumn(root.guid, state.trace.root.column);
      } else if (state.base) openLineage(state.base.guid);
    });
  }
  setupZoomAndPan();
  setupTimeWindow();
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("depth")) $("depth").value = params.get("depth");
  if (params.get("direction")) $("direction").value = params.get("direction");
  if (params.get("guid")) openLineage(params.get("guid"));
}

start();
