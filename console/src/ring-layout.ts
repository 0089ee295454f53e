// Where the ring's accounts and their labels go (the entity page's ring, entity-ring.tsx): by hops
// from the entity, filling the box, each label on a side of its account that no link crosses and
// no other label or account covers. Pure geometry, in the drawing's model coordinates.
import type { EntityGraph } from './types.ts';

/** Labels are drawn at this size on screen, whatever the zoom (a ring of many accounts zooms out). */
export const LABEL_PX = 12;
const MARGIN = 56;
/** Room beside the outermost accounts for a label set to their side. */
const LABEL_ROOM = 96;

interface Placed {
  id: string;
  x: number;
  y: number;
  angle: number;
}

/** The accounts by hops (hubs one hop out), and who links to whom. */
function byHops(
  graph: EntityGraph,
  hubIds: string[],
): { rings: Map<number, string[]>; deepest: number; neighbours: Map<string, string[]> } {
  const rings = new Map<number, string[]>();
  for (const n of graph.nodes) rings.set(n.distance, [...(rings.get(n.distance) ?? []), n.entity_id]);
  rings.set(1, [...(rings.get(1) ?? []), ...hubIds]);
  const deepest = Math.max(1, ...rings.keys());
  const neighbours = new Map<string, string[]>();
  for (const e of graph.edges) {
    neighbours.set(e.from, [...(neighbours.get(e.from) ?? []), e.to]);
    neighbours.set(e.to, [...(neighbours.get(e.to) ?? []), e.from]);
  }
  return { rings, deepest, neighbours };
}

/** The mean of `key` over an account's neighbours already placed (∞ when none is). */
function meanOf(id: string, neighbours: Map<string, string[]>, key: Map<string, number>): number {
  const seen = (neighbours.get(id) ?? []).map((n) => key.get(n)).filter((a): a is number => a !== undefined);
  return seen.length ? seen.reduce((a, b) => a + b, 0) / seen.length : Number.POSITIVE_INFINITY;
}

/**
 * Positions in rings by hops from the entity, as ellipses spanning the box (a circle would leave
 * the sides of a wide box empty). Each ring is ordered by the angle of its links in the ring
 * inside it, so links run outwards rather than across; hubs sit on the first ring.
 */
export function placeRings(graph: EntityGraph, hubIds: string[], width: number, height: number): Placed[] {
  const cx = width / 2;
  const cy = height / 2;
  const { rings, deepest, neighbours } = byHops(graph, hubIds);
  const angle = new Map<string, number>();
  const out: Placed[] = [{ id: graph.entity_id, x: cx, y: cy, angle: 0 }];
  for (let d = 1; d <= deepest; d++) {
    const ids = rings.get(d) ?? [];
    const order = d === 1 ? ids : [...ids].sort((a, b) => meanOf(a, neighbours, angle) - meanOf(b, neighbours, angle));
    const rx = ((width / 2 - MARGIN * 2) * d) / deepest;
    const ry = ((height / 2 - MARGIN) * d) / deepest;
    order.forEach((id, i) => {
      const a =
        -Math.PI / 2 +
        (2 * Math.PI * i) / Math.max(1, order.length) +
        (d % 2 ? 0 : Math.PI / Math.max(2, order.length));
      angle.set(id, a);
      out.push({ id, x: cx + rx * Math.cos(a), y: cy + ry * Math.sin(a), angle: a });
    });
  }
  // Stretched to the box: a few accounts on the inner rings would otherwise leave most of it empty.
  const [minX, maxX] = [Math.min(...out.map((p) => p.x)), Math.max(...out.map((p) => p.x))];
  const [minY, maxY] = [Math.min(...out.map((p) => p.y)), Math.max(...out.map((p) => p.y))];
  const mx = Math.min(LABEL_ROOM, width / 4);
  const my = Math.min(MARGIN / 2, height / 4);
  const to = (v: number, lo: number, hi: number, from: number, till: number) =>
    hi - lo < 1 ? (from + till) / 2 : from + ((v - lo) / (hi - lo)) * (till - from);
  return out.map((p) => ({ ...p, x: to(p.x, minX, maxX, mx, width - mx), y: to(p.y, minY, maxY, my, height - my) }));
}

type Box = { x1: number; y1: number; x2: number; y2: number };
export const overlap = (a: Box, b: Box) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

/** Whether the segment p–q crosses the rectangle (Liang–Barsky clipping). */
export function crosses(
  p: { x: number; y: number },
  q: { x: number; y: number },
  r: { x1: number; y1: number; x2: number; y2: number },
): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = q.x - p.x;
  const dy = q.y - p.y;
  for (const [pp, qq] of [
    [-dx, p.x - r.x1],
    [dx, r.x2 - p.x],
    [-dy, p.y - r.y1],
    [dy, r.y2 - p.y],
  ] as const) {
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
export const LABEL_SIDES = [
  {
    angle: Math.PI / 2,
    style: { 'text-halign': 'center', 'text-valign': 'bottom', 'text-margin-x': 0, 'text-margin-y': 4 },
  },
  {
    angle: -Math.PI / 2,
    style: { 'text-halign': 'center', 'text-valign': 'top', 'text-margin-x': 0, 'text-margin-y': -4 },
  },
  { angle: 0, style: { 'text-halign': 'right', 'text-valign': 'center', 'text-margin-x': 4, 'text-margin-y': 0 } },
  {
    angle: Math.PI,
    style: { 'text-halign': 'left', 'text-valign': 'center', 'text-margin-x': -4, 'text-margin-y': 0 },
  },
  {
    angle: Math.PI / 4,
    style: { 'text-halign': 'right', 'text-valign': 'bottom', 'text-margin-x': 2, 'text-margin-y': 2 },
  },
  {
    angle: (3 * Math.PI) / 4,
    style: { 'text-halign': 'left', 'text-valign': 'bottom', 'text-margin-x': -2, 'text-margin-y': 2 },
  },
  {
    angle: -Math.PI / 4,
    style: { 'text-halign': 'right', 'text-valign': 'top', 'text-margin-x': 2, 'text-margin-y': -2 },
  },
  {
    angle: (-3 * Math.PI) / 4,
    style: { 'text-halign': 'left', 'text-valign': 'top', 'text-margin-x': -2, 'text-margin-y': -2 },
  },
];

/** The smallest angle between `angle` and any of `links` (π when there are none). */
export function clearance(angle: number, links: number[]): number {
  return links.reduce((least, l) => {
    const d = Math.abs(((angle - l + 3 * Math.PI) % (2 * Math.PI)) - Math.PI);
    return Math.min(least, d);
  }, Math.PI);
}
