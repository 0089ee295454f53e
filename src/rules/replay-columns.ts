// Which stored columns a rule test reads (docs/rules.md, "Testing a rule"), from the tested rule's
// body: replay-store.ts leaves out the large ones it cannot need.
import type { ASTNode } from '@marcbachmann/cel-js';
import type { RuleBody } from './compile.ts';
import { ruleEnvironment } from './cel-env.ts';

/** What a rule test reads: the two large columns, and whether the rule reads `safe_amount` (replay.ts, StoredFacts). */
export interface ColumnsRead {
  features: boolean;
  result: boolean;
  safeAmount: boolean;
}

/**
 * Which of the two large columns a rule needs: the feature vector for `signals`, the score
 * response for `score` and `safe_amount`. Reading them is most of a test's cost (a stored score
 * response is about a kilobyte), so a rule that reads neither skips them. Every identifier of the
 * condition and the cap counts, bound comprehension variables included: the answer may read a
 * column needlessly, never miss one. A body that does not parse needs both (it is refused anyway).
 */
export function columnsRead(body: Pick<RuleBody, 'condition' | 'cap'>): ColumnsRead {
  const names = new Set<string>();
  try {
    const env = ruleEnvironment([]).env;
    for (const source of [body.condition, typeof body.cap === 'string' ? body.cap : undefined]) {
      if (source === undefined) continue;
      const stack: unknown[] = [env.parse(source).ast];
      while (stack.length > 0) {
        const node = stack.pop();
        if (Array.isArray(node)) stack.push(...(node as unknown[]));
        else if (node !== null && typeof node === 'object' && 'op' in node) {
          const n = node as ASTNode;
          if (n.op === 'id') names.add(n.args as string);
          else if (n.op !== 'value') stack.push(n.args);
        }
      }
    }
  } catch {
    return { features: true, result: true, safeAmount: true };
  }
  return {
    features: names.has('signals'),
    result: names.has('score') || names.has('safe_amount'),
    safeAmount: names.has('safe_amount'),
  };
}
