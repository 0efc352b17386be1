// elastic-memory inspector: the graph view. Fetches /graph.json and draws the neighbourhood as SVG
// with a small force layout. Names are set with textContent only: stored text is never parsed as HTML.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function layout(nodes, links, width, height) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    nodes.forEach((n, i) => {
      const angle = (2 * Math.PI * i) / nodes.length;
      const radius = n.hops === 0 ? 0 : 80 * n.hops;
      n.x = width / 2 + radius * Math.cos(angle);
      n.y = height / 2 + radius * Math.sin(angle);
      n.vx = 0;
      n.vy = 0;
    });
    const edges = links.map((l) => [byId.get(l.source), byId.get(l.target), l.relation]).filter((e) => e[0] && e[1]);
    for (let step = 0; step < 300; step++) {
      const heat = 1 - step / 300;
      for (let i = 0; i < nodes.length; i++) {
        for (let j = i + 1; j < nodes.length; j++) {
          const a = nodes[i], b = nodes[j];
          let dx = a.x - b.x, dy = a.y - b.y;
          const d2 = Math.max(dx * dx + dy * dy, 25);
          const push = 40000 / d2;
          dx *= push / Math.sqrt(d2); dy *= push / Math.sqrt(d2);
          a.vx += dx; a.vy += dy; b.vx -= dx; b.vy -= dy;
        }
      }
      for (const [a, b] of edges) {
        const dx = b.x - a.x, dy = b.y - a.y;
        const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1);
        const pull = (d - 150) * 0.03;
        a.vx += (dx / d) * pull; a.vy += (dy / d) * pull;
        b.vx -= (dx / d) * pull; b.vy -= (dy / d) * pull;
      }
      for (const n of nodes) {
        n.vx += (width / 2 - n.x) * 0.004; n.vy += (height / 2 - n.y) * 0.004;
        n.x = Math.min(width - 30, Math.max(30, n.x + n.vx * heat));
        n.y = Math.min(height - 20, Math.max(20, n.y + n.vy * heat));
        n.vx *= 0.5; n.vy *= 0.5;
      }
    }
    return edges;
  }

  function draw(svg, data) {
    const width = Number(svg.getAttribute("width")), height = Number(svg.getAttribute("height"));
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const edges = layout(data.nodes, data.edges, width, height);
    const linkLayer = el("g", {}, svg), nodeLayer = el("g", {}, svg);
    const drawn = edges.map(([a, b, relation]) => {
      const line = el("line", { class: "link" }, linkLayer);
      const label = el("text", { class: "link-label", "text-anchor": "middle" }, linkLayer);
      label.textContent = relation || "";  // each edge keeps its own relation, even when one is dropped
      return { a, b, line, label };
    });
    const groups = data.nodes.map((n) => {
      const g = el("g", { class: n.hops === 0 ? "node centre" : "node", "data-name": n.id }, nodeLayer);
      el("circle", { r: n.hops === 0 ? 11 : 8 }, g);
      const text = el("text", { x: 13, y: 4 }, g);
      text.textContent = n.id;
      const title = el("title", {}, g);
      title.textContent = n.type ? `${n.id} (${n.type}), ${n.hops} hops` : n.id;
      return { n, g };
    });
    function place() {
      for (const { a, b, line, label } of drawn) {
        line.setAttribute("x1", a.x); line.setAttribute("y1", a.y);
        line.setAttribute("x2", b.x); line.setAttribute("y2", b.y);
        label.setAttribute("x", (a.x + b.x) / 2); label.setAttribute("y", (a.y + b.y) / 2 - 3);
      }
      for (const { n, g } of groups) g.setAttribute("transform", `translate(${n.x},${n.y})`);
    }
    for (const { n, g } of groups) {
      let moved = false;
      g.addEventListener("pointerdown", (down) => {
        moved = false;
        g.setPointerCapture(down.pointerId);
        const box = svg.getBoundingClientRect();
        const scale = width / box.width;
        function move(ev) {
          moved = true;
          n.x = (ev.clientX - box.left) * scale; n.y = (ev.clientY - box.top) * scale;
          place();
        }
        function up() { g.removeEventListener("pointermove", move); g.removeEventListener("pointerup", up); }
        g.addEventListener("pointermove", move);
        g.addEventListener("pointerup", up);
      });
      g.addEventListener("click", () => {
        if (moved || n.hops === 0) return;
        const params = new URLSearchParams({ entity: n.id, hops: svg.dataset.hops || "2" });
        window.location.assign(`/graph?${params}`);
      });
    }
    place();
    svg.dataset.nodes = String(groups.length);
    svg.dataset.ready = "true";
  }

  function start() {
    const svg = document.getElementById("graph");
    if (!svg) return;
    const params = new URLSearchParams({ entity: svg.dataset.entity || "", hops: svg.dataset.hops || "2" });
    fetch(`/graph.json?${params}`, { credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`graph data: HTTP ${r.status}`))))
      .then((data) => draw(svg, data))
      .catch((err) => {
        const note = el("text", { x: 20, y: 30 }, svg);
        note.textContent = String(err.message || err);
      });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
