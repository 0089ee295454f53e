// `npx tsx bench/profile-top.ts FILE.cpuprofile [N]`: the N (default 15) frames with the most self time in a V8 CPU
// profile (node --cpu-prof), as a share of the samples, beside the share of garbage collection, idle and the program.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, n = '15'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[] };
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<string, number>();
for (const id of profile.samples) {
  const frame = byId.get(id)!.callFrame;
  const where = frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/(dist|src)\//, '$1/');
  const name = `${frame.functionName || '(anonymous)'} ${where ? `${where}:${frame.lineNumber + 1}` : ''}`.trim();
  self.set(name, (self.get(name) ?? 0) + 1);
}
const busy = profile.samples.length - (self.get('(idle)') ?? 0);
console.log(`samples ${profile.samples.length}, busy ${busy} (shares below are of the busy samples)`);
for (const [name, count] of [...self.entries()]
  .filter(([name]) => name !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(n)))
  console.log(`${((count / busy) * 100).toFixed(1).padStart(5)} %  ${name}`);
