// The graph page: draws the graph around an entity with Cytoscape (served from the site's own
// static files), recentres on a clicked entity, shows a clicked memory, and finds the path
// between two nodes. A file, not inline script: the Content-Security-Policy allows none.
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("graph");
  if (!box || typeof cytoscape === "undefined") return;
  const title = document.getElementById("graph-title");
  const detail = document.getElementById("graph-detail");
  const pathButton = document.getElementById("graph-path");
  const pathResult = document.getElementById("graph-path-result");
  let cy = null;
  let selected = null;
  let pathFrom = null;

  const entityUrl = (id) => box.dataset.entityUrl.replace("ENTITY", encodeURIComponent(id));
  const memoryUrl = (id) => box.dataset.memoryUrl.replace("MEMORY", encodeURIComponent(id));

  function clear(element) {
    while (element.firstChild) element.removeChild(element.firstChild);
  }

  function paragraph(text, className) {
    const p = document.createElement("p");
    p.textContent = text;
    if (className) p.className = className;
    return p;
  }

  function link(text, href) {
    const a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    return a;
  }

  function show(node) {
    selected = node;
    const data = node.data();
    clear(detail);
    clear(pathResult);
    title.textContent = data.type === "entity" ? data.label : "A memory";
    if (data.type === "entity") {
      const count = `${data.memories} memor${data.memories === 1 ? "y" : "ies"}`;
      detail.appendChild(paragraph(`${data.kind} · ${count}`, "muted"));
      const list = document.createElement("ul");
      list.className = "plain";
      node.neighborhood("node[type = 'memory']").forEach((memory) => {
        const item = document.createElement("li");
        item.appendChild(link(memory.data("label"), memoryUrl(memory.id().slice(2))));
        list.appendChild(item);
      });
      detail.appendChild(list);
      const p = document.createElement("p");
      p.appendChild(link(`Open ${data.label}'s page`, entityUrl(data.id.slice(2))));
      detail.appendChild(p);
    } else {
      detail.appendChild(paragraph(data.text));
      detail.appendChild(paragraph(`written ${data.written} · ${data.status}`, "muted"));
      const p = document.createElement("p");
      p.appendChild(link("Open the memory", memoryUrl(data.id.slice(2))));
      detail.appendChild(p);
    }
    pathButton.hidden = box.dataset.traversal !== "on";
    pathButton.textContent = pathFrom ? "Cancel the path" : "Path from here";
  }

  async function findPath(from, to) {
    clear(pathResult);
    cy.elements().removeClass("path");
    const query = new URLSearchParams({ from: from.id(), to: to.id() });
    const response = await fetch(`${box.dataset.pathUrl}?${query}`, {
      headers: { Accept: "application/json" },
    });
    const body = await response.json();
    if (!response.ok) {
      pathResult.appendChild(paragraph(body.detail || "No path could be found.", "errorlist"));
      return;
    }
    if (!body.nodes.length) {
      pathResult.appendChild(paragraph("No path within four links.", "muted"));
      return;
    }
    pathResult.appendChild(paragraph(`Path from ${from.data("label")} to ${to.data("label")}:`));
    const list = document.createElement("ol");
    list.className = "path-steps";
    body.nodes.forEach((node, index) => {
      const item = document.createElement("li");
      const step = index > 0 ? body.steps[index - 1] : null;
      const prefix = step ? `${step.direction === "out" ? "→" : "←"} ${step.kind}: ` : "";
      const href = node.type === "entity" ? entityUrl(node.id.slice(2)) : memoryUrl(node.id.slice(2));
      item.appendChild(document.createTextNode(prefix));
      item.appendChild(link(node.label, href));
      list.appendChild(item);
      cy.getElementById(node.id).addClass("path");
    });
    pathResult.appendChild(list);
  }

  async function load(entityId, remember) {
    const response = await fetch(`${box.dataset.url}?entity=${encodeURIComponent(entityId)}`, {
      headers: { Accept: "application/json" },
    });
    if (!response.ok) {
      clear(detail);
      detail.appendChild(paragraph("That entity could not be drawn.", "errorlist"));
      return;
    }
    const graph = await response.json();
    const elements = [
      ...graph.nodes.map((node) => ({ data: node })),
      ...graph.edges.map((edge) => ({ data: { id: `${edge.source}>${edge.target}`, ...edge } })),
    ];
    if (cy) cy.destroy();
    cy = cytoscape({
      container: box,
      elements,
      wheelSensitivity: 0.3,
      maxZoom: 1.6, // a few nodes are not drawn huge
      layout: {
        name: "concentric",
        concentric: (node) => (node.data("centre") ? 3 : node.data("type") === "memory" ? 2 : 1),
        levelWidth: () => 1,
        minNodeSpacing: 18,
        animate: false,
      },
      style: [
        { selector: "node", style: { label: "data(label)", "font-size": 10, color: "#1d2330",
          "text-wrap": "ellipsis", "text-max-width": "120px", "text-valign": "bottom",
          "text-margin-y": 4 } },
        { selector: "node[type = 'entity']", style: { shape: "round-rectangle", width: 26,
          height: 26, "background-color": "#2f5bd3" } },
        { selector: "node[kind = 'person']", style: { "background-color": "#2e7a43" } },
        { selector: "node[?centre]", style: { width: 40, height: 40, "font-weight": "bold",
          "background-color": "#b76a12" } },
        { selector: "node[type = 'memory']", style: { width: 10, height: 10,
          "background-color": "#9aa7bd", "font-size": 8, "text-opacity": 0.75 } },
        { selector: "edge", style: { width: 1, "line-color": "#c8cfdb" } },
        { selector: ":selected", style: { "border-width": 3, "border-color": "#1d2330" } },
        { selector: ".path", style: { "border-width": 4, "border-color": "#b42323" } },
      ],
    });
    box.graph = cy; // where a test (or a curious reader's console) finds the drawing
    cy.on("tap", "node", (event) => {
      const node = event.target;
      if (pathFrom && pathFrom.id() !== node.id()) {
        const from = pathFrom;
        pathFrom = null;
        show(node);
        findPath(from, node);
        return;
      }
      if (node.data("type") === "entity" && !node.data("centre")) {
        load(node.id().slice(2), true);
        return;
      }
      show(node);
    });
    const centre = cy.getElementById(graph.centre);
    show(centre);
    const heading = document.getElementById("graph-centre");
    if (heading) {
      heading.textContent = centre.data("label");
      heading.href = entityUrl(entityId);
    }
    const lists = document.getElementById("graph-lists");
    if (lists) lists.hidden = entityId !== box.dataset.first; // the lists are the first centre's
    if (remember) {
      window.history.pushState({ entity: entityId }, "", `${box.dataset.pageUrl}?entity=${entityId}`);
    }
    box.dataset.entity = entityId;
  }

  pathButton.addEventListener("click", () => {
    if (pathFrom) {
      pathFrom = null;
      pathButton.textContent = "Path from here";
      return;
    }
    pathFrom = selected;
    clear(pathResult);
    pathResult.appendChild(paragraph(`Now click the other end of the path from ${selected.data("label")}.`, "muted"));
    pathButton.textContent = "Cancel the path";
  });

  window.addEventListener("popstate", (event) => {
    if (event.state && event.state.entity) load(event.state.entity, false);
  });
  box.dataset.first = box.dataset.entity;
  load(box.dataset.entity, false);
});
