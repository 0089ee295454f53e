// An entity's ring (GET /api/v1/trust/entities/{id}/graph, role operator or admin): the accounts
// linked to it through shared identifiers, drawn with Cytoscape.js in layers by distance (the
// entity in the middle), flagged accounts marked, hubs as satellites of the entity (listed, never
// followed). Every account is a link to its own page, in the drawing and in the table beside it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Empty, Link, Loader, fmtNumber, navigate, useLoad } from '../ui.tsx';
import type { EntityGraph } from '../types.ts';

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

const short = (id: string) => (id.length > 12 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id);
const FLAG_WORDS: Record<string, string> = { fraud_reported: 'fraud report', blocklisted: 'blocklisted', chargeback: 'chargeback', dispute_lost: 'lost dispute' };

/** Labels are drawn at this size on screen, whatever the zoom (a ring of many accounts zooms out). */
const LABEL_PX = 12;
const MARGIN = 56;

interface Placed { id: string; x: number; y: number; angle: number }

/**
 * Positions in rings by hops from the entity, as ellipses spanning the box (a circle would leave
 * the sides of a wide box empty). Each ring is ordered by the angle of its links in the ring
 * inside it, so links run outwards rather than across; hubs sit on the first ring.
 */
function placeRings(graph: EntityGraph, hubIds: string[], width: number, height: number): Placed[] {
  const cx = width / 2;
  const cy = height / 2;
  const rings = new Map<number, string[]>();
  for (const n of graph.nodes) rings.set(n.distance, [...(rings.get(n.distance) ?? []), n.entity_id]);
  rings.set(1, [...(rings.get(1) ?? []), ...hubIds]);
  const deepest = Math.max(1, ...rings.keys());
  const neighbours = new Map<string, string[]>();
  for (const e of graph.edges) {
    neighbours.set(e.from, [...(neighbours.get(e.from) ?? []), e.to]);
    neighbours.set(e.to, [...(neighbours.get(e.to) ?? []), e.from]);
  }
  const angle = new Map<string, number>();
  const out: Placed[] = [{ id: graph.entity_id, x: cx, y: cy, angle: 0 }];
  for (let d = 1; d <= deepest; d++) {
    const ids = rings.get(d) ?? [];
    const inner = (id: string) => {
      const seen = (neighbours.get(id) ?? []).map((n) => angle.get(n)).filter((a): a is number => a !== undefined);
      return seen.length ? seen.reduce((a, b) => a + b, 0) / seen.length : Number.POSITIVE_INFINITY;
    };
    const order = d === 1 ? ids : [...ids].sort((a, b) => inner(a) - inner(b));
    const rx = ((width / 2 - MARGIN * 2) * d) / deepest;
    const ry = ((height / 2 - MARGIN) * d) / deepest;
    order.forEach((id, i) => {
      const a = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, order.length) + (d % 2 ? 0 : Math.PI / Math.max(2, order.length));
      angle.set(id, a);
      out.push({ id, x: cx + rx * Math.cos(a), y: cy + ry * Math.sin(a), angle: a });
    });
  }
  return out;
}

/** Whether the segment p–q crosses the rectangle (Liang–Barsky clipping). */
function crosses(p: { x: number; y: number }, q: { x: number; y: number }, r: { x1: number; y1: number; x2: number; y2: number }): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = q.x - p.x;
  const dy = q.y - p.y;
  for (const [pp, qq] of [[-dx, p.x - r.x1], [dx, r.x2 - p.x], [-dy, p.y - r.y1], [dy, r.y2 - p.y]] as const) {
    if (pp === 0) {
      if (qq < 0) return false;
    } else {
      const t = qq / pp;
      if (pp < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return false;
    }
  }
  return true;
}

/** Where a node's label may go: the direction it lies in (screen angle, y down) and its style. */
const LABEL_SIDES = [
  { angle: Math.PI / 2, style: { 'text-halign': 'center', 'text-valign': 'bottom', 'text-margin-x': 0, 'text-margin-y': 4 } },
  { angle: -Math.PI / 2, style: { 'text-halign': 'center', 'text-valign': 'top', 'text-margin-x': 0, 'text-margin-y': -4 } },
  { angle: 0, style: { 'text-halign': 'right', 'text-valign': 'center', 'text-margin-x': 4, 'text-margin-y': 0 } },
  { angle: Math.PI, style: { 'text-halign': 'left', 'text-valign': 'center', 'text-margin-x': -4, 'text-margin-y': 0 } },
  { angle: Math.PI / 4, style: { 'text-halign': 'right', 'text-valign': 'bottom', 'text-margin-x': 2, 'text-margin-y': 2 } },
  { angle: (3 * Math.PI) / 4, style: { 'text-halign': 'left', 'text-valign': 'bottom', 'text-margin-x': -2, 'text-margin-y': 2 } },
  { angle: -Math.PI / 4, style: { 'text-halign': 'right', 'text-valign': 'top', 'text-margin-x': 2, 'text-margin-y': -2 } },
  { angle: (-3 * Math.PI) / 4, style: { 'text-halign': 'left', 'text-valign': 'top', 'text-margin-x': -2, 'text-margin-y': -2 } },
];

/** The smallest angle between `angle` and any of `links` (π when there are none). */
function clearance(angle: number, links: number[]): number {
  return links.reduce((least, l) => {
    const d = Math.abs(((angle - l + 3 * Math.PI) % (2 * Math.PI)) - Math.PI);
    return Math.min(least, d);
  }, Math.PI);
}

function RingDrawing({ graph }: { graph: EntityGraph }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cy: import('cytoscape').Core | undefined;
    let gone = false;
    // Labels keep their size on screen; the tests read the figures from the box's data attributes.
    const measure = () => {
      if (!cy || !box.current) return;
      const z = cy.zoom();
      cy.elements().style({ 'font-size': LABEL_PX / z, 'text-background-padding': `${2 / z}px` });
      const drawn = cy.elements().renderedBoundingBox({ includeLabels: true });
      const labels = cy.nodes().map((n) => n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true }));
      const crossings = cy.edges().reduce((count, e) => count + labels.filter((r) => r.w > 0 && crosses(e.source().position(), e.target().position(), r)).length, 0);
      Object.assign(box.current.dataset, {
        edgeFontPx: String(Math.round(parseFloat(String(cy.edges().first().style('font-size'))) * z * 10) / 10),
        fill: String(Math.round((100 * (drawn.w * drawn.h)) / (box.current.clientWidth * box.current.clientHeight)) / 100),
        crossings: String(crossings),
      });
    };
    const draw = () => {
      if (!cy || !box.current) return;
      const placed = placeRings(graph, graph.hubs.map((_, i) => `hub-${i}`), box.current.clientWidth, box.current.clientHeight);
      for (const p of placed) cy.getElementById(p.id).position({ x: p.x, y: p.y });
      // each label on the side of its node where none of its links runs
      cy.nodes().forEach((node) => {
        const at = node.position();
        const links = node.connectedEdges().map((e) => {
          const other = e.source().id() === node.id() ? e.target().position() : e.source().position();
          return Math.atan2(other.y - at.y, other.x - at.x);
        });
        const side = LABEL_SIDES.reduce((best, c) => (clearance(c.angle, links) > clearance(best.angle, links) ? c : best));
        node.style(side.style);
      });
      cy.resize();
      cy.fit(undefined, 16);
      measure();
    };
    // A narrower window (a phone turned, a side panel opened) redraws the ring to fit its box.
    const resized = new ResizeObserver(draw);
    if (box.current) resized.observe(box.current);
    // Loaded with the first ring drawn: the rest of the console does not carry the library.
    void import('cytoscape').then(({ default: cytoscape }) => {
      if (gone || !box.current) return;
      markCytoscapeStylesheet();
      const hubs = graph.hubs.map((h, i) => ({ data: { id: `hub-${i}`, label: `${h.type} hub · ${fmtNumber(h.entities)} accounts` }, classes: 'hub' }));
      cy = cytoscape({
        container: box.current,
        elements: [
          ...graph.nodes.map((n) => ({ data: { id: n.entity_id, label: short(n.entity_id) }, classes: [n.distance === 0 ? 'root' : '', n.flagged ? 'flagged' : ''].join(' ').trim() })),
          ...graph.edges.map((e, i) => ({ data: { id: `e${i}`, source: e.from, target: e.to, label: e.type.replace(/_/g, ' ') } })),
          ...hubs,
          ...hubs.map((h) => ({ data: { id: `${h.data.id}-link`, source: graph.entity_id, target: h.data.id }, classes: 'hub-link' })),
        ],
        style: [
          { selector: 'node', style: { label: 'data(label)', 'font-size': LABEL_PX, 'background-color': '#1f4e8c', color: '#1c2430', 'text-valign': 'bottom', 'text-margin-y': 4, width: 18, height: 18, 'text-background-color': '#fff', 'text-background-opacity': 0.9, 'text-background-shape': 'roundrectangle', 'z-index': 2 } },
          { selector: 'node.root', style: { 'background-color': '#1c2430', width: 26, height: 26, 'font-weight': 'bold' } },
          { selector: 'node.flagged', style: { 'background-color': '#b3261e', shape: 'diamond', width: 24, height: 24, color: '#8c1d18', 'font-weight': 'bold' } },
          { selector: 'node.hub', style: { 'background-color': '#d7dce3', 'border-color': '#8a94a3', 'border-width': 1, shape: 'round-rectangle', width: 16, height: 16, color: '#5b6675' } },
          { selector: 'edge', style: { label: 'data(label)', 'font-size': LABEL_PX, color: '#3d4756', width: 1.5, 'line-color': '#8a94a3', 'curve-style': 'straight', 'text-background-color': '#fff', 'text-background-opacity': 1, 'text-rotation': 'autorotate', 'z-index': 1 } },
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
        if (!id.startsWith('hub-') && id !== graph.entity_id) navigate(`/entities/${encodeURIComponent(id)}`);
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
      <div ref={box} class="ring-drawing" role="img" aria-label={`The entity's ring: ${graph.nodes.length - 1} linked accounts, ${graph.nodes.filter((n) => n.flagged).length} flagged, ${graph.hubs.length} hubs`} />
      <ul class="ring-legend" aria-label="Legend">
        <li><span class="swatch root" aria-hidden="true" /> this entity</li>
        <li><span class="swatch account" aria-hidden="true" /> linked account (click to open)</li>
        <li><span class="swatch flagged" aria-hidden="true" /> flagged: fraud report, chargeback, blocklisted or lost dispute</li>
        <li><span class="swatch hub" aria-hidden="true" /> hub: an identifier shared too widely to follow</li>
        <li><span class="swatch line" aria-hidden="true" /> a shared identifier, named on the line; rings outwards are hops</li>
      </ul>
    </>
  );
}

export function EntityRing({ id }: { id: string }) {
  const [depth, setDepth] = useState(2);
  const state = useLoad(() => api<EntityGraph>('GET', `/api/v1/trust/entities/${encodeURIComponent(id)}/graph${query({ depth })}`), [id, depth]);
  if (state.error?.status === 403) return <Empty>Rings are shown to operator and admin principals only.</Empty>;
  return (
    <Loader state={state} feature="The ring">
      {(g) => (
        <>
          <div class="row">
            <label>Hops <select value={depth} onChange={(e) => setDepth(Number(e.currentTarget.value))}>{[1, 2, 3].map((d) => <option key={d} value={d}>{d}</option>)}</select></label>
            {g.truncated && <span class="muted">More accounts are linked than shown (at most 200).</span>}
          </div>
          {g.nodes.length <= 1 && g.hubs.length === 0 ? (
            <Empty>No other account shares an identifier with this one.</Empty>
          ) : (
            <>
              <RingDrawing graph={g} />
              <div class="table-wrap">
                <table class="ring">
                  <thead><tr><th scope="col">Account</th><th scope="col" class="num">Hops</th><th scope="col">Flagged</th></tr></thead>
                  <tbody>
                    {g.nodes.filter((n) => n.distance > 0).map((n) => (
                      <tr key={n.entity_id}>
                        <td class="mono trunc"><Link to={`/entities/${encodeURIComponent(n.entity_id)}`} title={n.entity_id}>{short(n.entity_id)}</Link></td>
                        <td class="num">{n.distance}</td>
                        <td>{n.flagged ? <span class="badge level-critical">{n.flags.map((f) => FLAG_WORDS[f] ?? f).join(', ')}</span> : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {g.hubs.length > 0 && <p class="muted">Hubs, not followed: {g.hubs.map((h) => `${h.type} shared by ${fmtNumber(h.entities)} accounts`).join('; ')}.</p>}
            </>
          )}
        </>
      )}
    </Loader>
  );
}
