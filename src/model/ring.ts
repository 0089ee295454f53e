// What a ring is, in the words every feature reads: the entities linked to a root through shared
// identifiers, their distance and flags. The walk that builds one is src/rings/graph.ts.

export type RingFlag = 'fraud_reported' | 'blocklisted' | 'chargeback' | 'dispute_lost';

export interface RingNode {
  entityId: string;
  distance: number;
  flags: RingFlag[];
  flaggedAt: number;
  /** identifier types on one shortest path from the root, root side first */
  via: string[];
}

export interface Ring {
  root: string;
  nodes: RingNode[];
  edges: Array<{ from: string; to: string; type: string; hash: string }>;
  hubs: Array<{ type: string; hash: string; entities: number }>;
  truncated: boolean;
}
