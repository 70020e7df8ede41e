// The lineage page: search assets, draw a layered lineage graph in SVG, show a process's column mappings.
// No dependencies; every value from the catalog is inserted as text, never as HTML.
"use strict";

const API = "api/atlas/v2";
const SVG_NS = "http://www.w3.org/2000/svg";
const NODE_W = 160, NODE_H = 48, GAP_X = 44, GAP_Y = 22, MARGIN = 12;
const $ = (id) => document.getElementById(id);
let currentGraph = null;

async function api(path, body) {
  const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  const response = await fetch(`${API}${path}`, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.errorMessage || (data.error && data.error.message) || `HTTP ${response.status}`);
  return data;
}

function el(tag, attrs = {}, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function status(text) { $("status").textContent = text; }

async function search(keywords) {
  status("Searching…");
  try {
    const data = await api("/search/query", {keywords: keywords || "*", limit: 100});
    const list = $("results");
    list.replaceChildren();
    for (const hit of data.value) {
      const item = el("li", {class: "result", tabindex: "0", "data-guid": hit.id, "data-qualified-name": hit.qualifiedName});
      item.append(el("div", {class: "name"}, hit.name || hit.qualifiedName), el("div", {class: "type"}, hit.entityType),
                  el("div", {class: "qn"}, hit.qualifiedName));
      item.addEventListener("click", () => openLineage(hit.id));
      item.addEventListener("keydown", (e) => { if (e.key === "Enter") openLineage(hit.id); });
      list.append(item);
    }
    status(`${data["@search.count"]} asset(s) found${data.value.length < data["@search.count"] ? `, first ${data.value.length} shown` : ""}.`);
  } catch (err) { status(`Search failed: ${err.message}`); }
}

function classify(data) {
  // Relations always connect a dataset and a process; the base tells which side is which.
  const processes = new Set(), datasets = new Set();
  const base = data.baseEntityGuid;
  const adjacency = new Map();
  for (const r of data.relations) {
    for (const [a, b] of [[r.fromEntityId, r.toEntityId], [r.toEntityId, r.fromEntityId]]) {
      if (!adjacency.has(a)) adjacency.set(a, []);
      adjacency.get(a).push(b);
    }
  }
  const baseIsProcess = data.baseIsProcess;
  const queue = [[base, baseIsProcess]];
  const seen = new Set([base]);
  while (queue.length) {
    const [guid, proc] = queue.shift();
    (proc ? processes : datasets).add(guid);
    for (const next of adjacency.get(guid) || []) {
      if (!seen.has(next)) { seen.add(next); queue.push([next, !proc]); }
    }
  }
  return {processes, datasets};
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
  const layer = new Map([[data.baseEntityGuid, 0]]);
  const queue = [data.baseEntityGuid];
  while (queue.length) {
    const guid = queue.shift();
    for (const next of out.get(guid) || []) if (!layer.has(next)) { layer.set(next, layer.get(guid) + 1); queue.push(next); }
    for (const prev of inc.get(guid) || []) if (!layer.has(prev)) { layer.set(prev, layer.get(guid) - 1); queue.push(prev); }
  }
  for (const guid of Object.keys(data.guidEntityMap)) if (!layer.has(guid)) layer.set(guid, 0);
  return {layer, inc};
}

function draw(data) {
  const {processes} = classify(data);
  const {layer, inc} = layers(data);
  const byLayer = new Map();
  for (const [guid, l] of layer) { if (!byLayer.has(l)) byLayer.set(l, []); byLayer.get(l).push(guid); }
  const order = [...byLayer.keys()].sort((a, b) => a - b);
  const minLayer = order[0];
  const pos = new Map();
  const name = (g) => (data.guidEntityMap[g].attributes.name || data.guidEntityMap[g].displayText || "").toLowerCase();
  let height = 0;
  for (const l of order) {
    const guids = byLayer.get(l);
    const center = (g) => {
      const ys = (inc.get(g) || []).filter((p) => pos.has(p)).map((p) => pos.get(p).y);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : Infinity;
    };
    guids.sort((a, b) => (center(a) - center(b)) || name(a).localeCompare(name(b)));
    guids.forEach((g, i) => pos.set(g, {x: MARGIN + (l - minLayer) * (NODE_W + GAP_X), y: MARGIN + i * (NODE_H + GAP_Y)}));
    height = Math.max(height, MARGIN * 2 + guids.length * (NODE_H + GAP_Y));
  }
  const width = MARGIN * 2 + order.length * (NODE_W + GAP_X) - GAP_X;
  const svg = el("svg:svg", {width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "lineage graph"});
  const defs = el("svg:defs");
  const marker = el("svg:marker", {id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "8", markerHeight: "8", orient: "auto-start-reverse"});
  marker.append(el("svg:path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#8794a3"}));
  defs.append(marker);
  svg.append(defs);
  for (const r of data.relations) {
    const a = pos.get(r.fromEntityId), b = pos.get(r.toEntityId);
    if (!a || !b) continue;
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2, mid = (x1 + x2) / 2;
    svg.append(el("svg:path", {class: "edge", d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`,
      "marker-end": "url(#arrow)", "data-from": r.fromEntityId, "data-to": r.toEntityId}));
  }
  for (const [guid, p] of pos) {
    const entity = data.guidEntityMap[guid];
    const kind = processes.has(guid) ? "process" : "dataset";
    const label = entity.attributes.name || entity.displayText || entity.attributes.qualifiedName;
    const g = el("svg:g", {class: `node ${kind}${guid === data.baseEntityGuid ? " base" : ""}`, transform: `translate(${p.x},${p.y})`,
      tabindex: "0", "data-guid": guid, "data-qualified-name": entity.attributes.qualifiedName, "data-type-name": entity.typeName});
    g.append(el("svg:title", {}, entity.attributes.qualifiedName));
    g.append(el("svg:rect", {width: NODE_W, height: NODE_H, rx: kind === "process" ? 18 : 3}));
    g.append(el("svg:text", {class: "label", x: 9, y: 20}, label.length > 22 ? `${label.slice(0, 21)}…` : label));
    g.append(el("svg:text", {class: "kind", x: 9, y: 38}, entity.typeName.length > 27 ? `${entity.typeName.slice(0, 26)}…` : entity.typeName));
    g.addEventListener("click", () => showDetails(guid));
    g.addEventListener("keydown", (e) => { if (e.key === "Enter") showDetails(guid); });
    svg.append(g);
  }
  $("graph").replaceChildren(svg);
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
    currentGraph = data;
    const entity = data.guidEntityMap[guid];
    $("graph-title").textContent = `Lineage of ${entity.attributes.name || entity.attributes.qualifiedName}`;
    draw(data);
    status(`${Object.keys(data.guidEntityMap).length} node(s), ${data.relations.length} edge(s).`);
    await showDetails(guid);
  } catch (err) { status(`Lineage failed: ${err.message}`); }
}

function columnMappingTable(raw) {
  let mappings;
  try { mappings = JSON.parse(raw); } catch { return el("p", {}, "columnMapping is not valid JSON."); }
  const box = el("div");
  box.append(el("h3", {}, "Column mappings"));
  const table = el("table", {class: "column-mapping"});
  const head = el("tr");
  for (const title of ["Source dataset", "Sink dataset", "Source column", "Sink column"]) head.append(el("th", {}, title));
  table.append(head);
  for (const mapping of Array.isArray(mappings) ? mappings : []) {
    const datasets = mapping.DatasetMapping || {};
    for (const column of mapping.ColumnMapping || []) {
      const row = el("tr", {class: "column-mapping-row"});
      for (const value of [datasets.Source, datasets.Sink, column.Source, column.Sink]) row.append(el("td", {}, String(value ?? "")));
      table.append(row);
    }
  }
  box.append(table);
  return box;
}

async function showDetails(guid) {
  document.querySelectorAll(".node.selected").forEach((n) => n.classList.remove("selected"));
  const node = document.querySelector(`.node[data-guid="${CSS.escape(guid)}"]`);
  if (node) node.classList.add("selected");
  try {
    const {entity} = await api(`/entity/guid/${encodeURIComponent(guid)}?ignoreRelationships=true`);
    const panel = $("details-panel");
    panel.hidden = false;
    panel.dataset.guid = guid;
    $("details-title").textContent = entity.attributes.name || entity.attributes.qualifiedName;
    const summary = $("details-summary");
    summary.replaceChildren();
    for (const [key, value] of [["Type", entity.typeName], ["qualifiedName", entity.attributes.qualifiedName], ["guid", entity.guid], ["Status", entity.status]]) {
      summary.append(el("dt", {}, key), el("dd", {}, value));
    }
    $("column-mapping").replaceChildren(entity.attributes.columnMapping ? columnMappingTable(entity.attributes.columnMapping) : "");
    const body = $("details-attributes").tBodies[0];
    body.replaceChildren();
    for (const [key, value] of Object.entries(entity.attributes)) {
      if (key === "columnMapping" || key === "qualifiedName") continue;
      const shown = typeof value === "object" && value !== null
        ? (Array.isArray(value) ? value : [value]).map((v) => (v && v.uniqueAttributes ? v.uniqueAttributes.qualifiedName : JSON.stringify(v))).join("\n")
        : String(value);
      const row = el("tr");
      row.append(el("th", {}, key), el("td", {}, shown));
      body.append(row);
    }
  } catch (err) { status(`Could not load the entity: ${err.message}`); }
}

function start() {
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); search($("search-input").value.trim()); });
  $("details-open").addEventListener("click", () => openLineage($("details-panel").dataset.guid));
  for (const id of ["depth", "direction"]) $(id).addEventListener("change", () => { if (currentGraph) openLineage(currentGraph.baseEntityGuid); });
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("depth")) $("depth").value = params.get("depth");
  if (params.get("direction")) $("direction").value = params.get("direction");
  if (params.get("guid")) openLineage(params.get("guid"));
}

start();
