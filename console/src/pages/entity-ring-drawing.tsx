// An entity's ring drawn with Cytoscape.js: layers by distance around the entity, flagged accounts
// marked, hubs as its satellites, each label on the side of its node that no link crosses; and the legend.
import { useEffect, useRef } from 'preact/hooks';
import { fmtNumber, navigate } from '../ui.tsx';
import type { EntityGraph } from '../types.ts';
import { LABEL_PX, LABEL_SIDES, clearance, crosses, overlap, placeRings } from '../ring-layout.ts';

/**
 * Cytoscape inserts a <style> element unless one with this id exists; the console's CSP (style-src
 * 'self') refuses inline styles, so the marker stands in and styles.css holds its one rule.
 */
function markCytoscapeStylesheet(): void {
  const id = '__________cytoscape_stylesheet';
  if (document.getElementById(id)) return;
  const marker = document.createElement('meta');
  marker.id = id;
  document.head.append(marker);
}
export const short = (id: string) => (id.length > 12 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id);

export function RingDrawing({ graph }: { graph: EntityGraph }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cy: import('cytoscape').Core | undefined;
    let gone = false;
    // Labels keep their size on screen; the tests read the figures from the box's data attributes.
    const labelBox = (n: import('cytoscape').NodeSingular) =>
      n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true });
    const crossingsOf = (r: { x1: number; y1: number; x2: number; y2: number; w: number }) =>
      r.w > 0 ? cy!.edges().filter((e) => crosses(e.source().position(), e.target().position(), r)).length : 0;
    // Labels keep their size on screen, whatever the zoom the fit chose.
    const settle = () => {
      cy!.fit(undefined, 16);
      const z = cy!.zoom();
      cy!.elements().style({ 'font-size': LABEL_PX / z, 'text-background-padding': `${2 / z}px` });
    };
    // Each label on the side of its node that no link crosses, the widest gap between its links first.
    const placeLabels = () => {
      cy!.nodes().forEach((node) => {
        const at = node.position();
        const links = node.connectedEdges().map((e) => {
          const other = e.source().id() === node.id() ? e.target().position() : e.source().position();
          return Math.atan2(other.y - at.y, other.x - at.x);
        });
        const others = cy!.nodes().filter((n) => n.id() !== node.id());
        const bodies = others.map((n) => n.boundingBox({ includeLabels: false }));
        const labels = others.map(labelBox);
        const ranked = LABEL_SIDES.map((side) => {
          node.style(side.style);
          const r = labelBox(node);
          const overlaps = [...bodies, ...labels].filter((o) => o.w > 0 && overlap(r, o)).length;
          return { side, crossings: crossingsOf(r) + overlaps, gap: clearance(side.angle, links) };
        }).sort((x, y) => x.crossings - y.crossings || y.gap - x.gap);
        node.style(ranked[0]!.side.style);
      });
    };
    // The figures the browser tests read from the box's data attributes.
    const measure = () => {
      if (!cy || !box.current) return;
      const z = cy.zoom();
      const drawn = cy.elements().renderedBoundingBox({ includeLabels: true });
      Object.assign(box.current.dataset, {
        edgeFontPx: String(Math.round(parseFloat(String(cy.edges().first().style('font-size'))) * z * 10) / 10),
        fill: String(
          Math.round((100 * (drawn.w * drawn.h)) / (box.current.clientWidth * box.current.clientHeight)) / 100,
        ),
        crossings: String(cy.nodes().reduce((n, node) => n + crossingsOf(labelBox(node)), 0)),
        overlaps: String(
          cy
            .nodes()
            .reduce(
              (n, node) =>
                n + cy!.nodes().filter((o) => o.id() !== node.id() && overlap(labelBox(node), labelBox(o))).length,
              0,
            ) / 2,
        ),
        width: String(box.current.clientWidth),
      });
    };
    const draw = () => {
      if (!cy || !box.current) return;
      const placed = placeRings(
        graph,
        graph.hubs.map((_, i) => `hub-${i}`),
        box.current.clientWidth,
        box.current.clientHeight,
      );
      for (const p of placed) cy.getElementById(p.id).position({ x: p.x, y: p.y });
      cy.resize();
      // the fit depends on the labels' sides and sizes, and they on its zoom: twice settles it
      for (let i = 0; i < 2; i++) {
        settle();
        placeLabels();
      }
      settle();
      measure();
    };
    // A narrower window (a phone turned, a side panel opened) redraws the ring to fit its box.
    const resized = new ResizeObserver(draw);
    if (box.current) resized.observe(box.current);
    // Loaded with the first ring drawn: the rest of the console does not carry the library.
    void import('cytoscape').then(({ default: cytoscape }) => {
      if (gone || !box.current) return;
      markCytoscapeStylesheet();
      const hubs = graph.hubs.map((h, i) => ({
        data: { id: `hub-${i}`, label: `${h.type} hub · ${fmtNumber(h.entities)} accounts` },
        classes: 'hub',
      }));
      cy = cytoscape({
        container: box.current,
        elements: [
          // the entity itself goes unlabelled: the legend names it, and the middle has no room beside its links
          ...graph.nodes.map((n) => ({
            data: { id: n.entity_id, label: n.distance === 0 ? '' : short(n.entity_id) },
            classes: [n.distance === 0 ? 'root' : '', n.flagged ? 'flagged' : ''].join(' ').trim(),
          })),
          ...graph.edges.map((e, i) => ({
            data: { id: `e${i}`, source: e.from, target: e.to, label: e.type.replace(/_/g, ' ') },
          })),
          ...hubs,
          ...hubs.map((h) => ({
            data: { id: `${h.data.id}-link`, source: graph.entity_id, target: h.data.id },
            classes: 'hub-link',
          })),
        ],
        style: [
          {
            selector: 'node',
            style: {
              label: 'data(label)',
              'font-size': LABEL_PX,
              'background-color': '#1f4e8c',
              color: '#1c2430',
              'text-valign': 'bottom',
              'text-margin-y': 4,
              width: 18,
              height: 18,
              'text-background-color': '#fff',
              'text-background-opacity': 0.9,
              'text-background-shape': 'roundrectangle',
              'z-index': 2,
            },
          },
          {
            selector: 'node.root',
            style: { 'background-color': '#1c2430', width: 26, height: 26, 'font-weight': 'bold' },
          },
          {
            selector: 'node.flagged',
            style: {
              'background-color': '#b3261e',
              shape: 'diamond',
              width: 24,
              height: 24,
              color: '#8c1d18',
              'font-weight': 'bold',
            },
          },
          {
            selector: 'node.hub',
            style: {
              'background-color': '#d7dce3',
              'border-color': '#8a94a3',
              'border-width': 1,
              shape: 'round-rectangle',
              width: 16,
              height: 16,
              color: '#5b6675',
            },
          },
          {
            selector: 'edge',
            style: {
              label: 'data(label)',
              'font-size': LABEL_PX,
              color: '#3d4756',
              width: 1.5,
              'line-color': '#8a94a3',
              'curve-style': 'straight',
              'text-background-color': '#fff',
              'text-background-opacity': 1,
              'text-rotation': 'autorotate',
              'z-index': 1,
            },
          },
          { selector: 'edge.hub-link', style: { 'line-style': 'dashed', 'line-color': '#b5bfcc' } },
        ],
        layout: { name: 'preset' },
        userZoomingEnabled: false,
        userPanningEnabled: false,
        boxSelectionEnabled: false,
        autoungrabify: true,
      });
      cy.on('tap', 'node', (evt) => {
        const id = String(evt.target.id());
        // A redacted account (another client's, docs/api.md "Rings") has no page to open.
        const hidden = graph.nodes.some((n) => n.entity_id === id && n.redacted);
        if (!id.startsWith('hub-') && id !== graph.entity_id && !hidden)
          navigate(`/entities/${encodeURIComponent(id)}`);
      });
      draw();
      box.current.dataset.nodes = String(cy.nodes().length);
    });
    return () => {
      gone = true;
      resized.disconnect();
      cy?.destroy();
    };
  }, [graph]);
  return (
    <>
      <div
        ref={box}
        class="ring-drawing"
        role="img"
        aria-label={
          `The entity's ring: ${graph.nodes.length - 1} linked accounts, ` +
          `${graph.nodes.filter((n) => n.flagged).length} flagged, ${graph.hubs.length} hubs`
        }
      />
      <ul class="ring-legend" aria-label="Legend">
        <li>
          <span class="swatch root" aria-hidden="true" /> this entity
        </li>
        <li>
          <span class="swatch account" aria-hidden="true" /> linked account (click to open)
        </li>
        <li>
          <span class="swatch flagged" aria-hidden="true" /> flagged: fraud report, chargeback, blocklisted or lost
          dispute
        </li>
        <li>
          <span class="swatch hub" aria-hidden="true" /> hub: an identifier shared too widely to follow
        </li>
        <li>
          <span class="swatch line" aria-hidden="true" /> a shared identifier, named on the line; rings outwards are
          hops
        </li>
      </ul>
    </>
  );
}
