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

function RingDrawing({ graph }: { graph: EntityGraph }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let cy: import('cytoscape').Core | undefined;
    let gone = false;
    // A narrower window (a phone turned, a side panel opened) redraws the ring to fit its box.
    const resized = new ResizeObserver(() => {
      cy?.resize();
      cy?.fit(undefined, 24);
    });
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
          ...graph.edges.map((e, i) => ({ data: { id: `e${i}`, source: e.from, target: e.to, label: e.type.replace('_', ' ') } })),
          ...hubs,
          ...hubs.map((h) => ({ data: { id: `${h.data.id}-link`, source: graph.entity_id, target: h.data.id }, classes: 'hub-link' })),
        ],
        style: [
          { selector: 'node', style: { label: 'data(label)', 'font-size': 10, 'background-color': '#1f4e8c', color: '#1c2430', 'text-valign': 'bottom', 'text-margin-y': 4, width: 18, height: 18 } },
          { selector: 'node.root', style: { 'background-color': '#1c2430', width: 26, height: 26, 'font-weight': 'bold' } },
          { selector: 'node.flagged', style: { 'background-color': '#b3261e', shape: 'diamond', width: 24, height: 24 } },
          { selector: 'node.hub', style: { 'background-color': '#d7dce3', shape: 'round-rectangle', width: 14, height: 14, color: '#5b6675' } },
          { selector: 'edge', style: { label: 'data(label)', 'font-size': 8, color: '#5b6675', width: 1.5, 'line-color': '#8a94a3', 'curve-style': 'bezier', 'text-background-color': '#fff', 'text-background-opacity': 1 } },
          { selector: 'edge.hub-link', style: { 'line-style': 'dashed', 'line-color': '#b5bfcc' } },
        ],
        // Layers by distance from the entity: the ring reads outwards, as the API counts hops.
        layout: { name: 'breadthfirst', roots: [graph.entity_id], circle: true, spacingFactor: 1.1, animate: false },
        userZoomingEnabled: false,
        boxSelectionEnabled: false,
      });
      cy.on('tap', 'node', (evt) => {
        const id = String(evt.target.id());
        if (!id.startsWith('hub-') && id !== graph.entity_id) navigate(`/entities/${encodeURIComponent(id)}`);
      });
      box.current.dataset.nodes = String(cy.nodes().length);
    });
    return () => {
      gone = true;
      resized.disconnect();
      cy?.destroy();
    };
  }, [graph]);
  return <div ref={box} class="ring-drawing" role="img" aria-label={`The entity's ring: ${graph.nodes.length - 1} linked accounts, ${graph.nodes.filter((n) => n.flagged).length} flagged, ${graph.hubs.length} hubs`} />;
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
