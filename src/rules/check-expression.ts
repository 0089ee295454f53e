// One CEL expression of a rule (its condition or its cap) parsed, walked and type-checked, with
// each problem placed at its line and column of the source, as the rule editor shows it.
import type { ASTNode, ParseResult } from '@marcbachmann/cel-js';
import { RULE_LIMITS, type RuleEnvironment } from './cel-env.ts';
import { inspectAst, lineColumn, type Inspection } from './engine-ast.ts';
import { estimateCost } from './cost.ts';

export interface RuleProblem {
  /** 'condition' | 'cap' | 'action' | 'override' | 'final' */
  field: string;
  /** names line:column when the problem has a position */
  message: string;
  line?: number;
  column?: number;
}

export interface Checked {
  program: ParseResult;
  inspection: Inspection;
  /** estimated worst-case units of one evaluation (cost.ts) */
  cost: number;
}

type Expected = 'bool' | 'number';

/**
 * Parses, type-checks and walks one expression. Problems name `field` and say where; a program is
 * returned only when there are none.
 */
export function checkExpression(
  renv: RuleEnvironment,
  field: string,
  source: unknown,
  expected: Expected,
): { problems: RuleProblem[]; checked?: Checked } {
  const problem = (message: string, offset?: number): RuleProblem[] => {
    if (offset === undefined || typeof source !== 'string') return [{ field, message }];
    const { line, column } = lineColumn(source, offset);
    return [{ field, message: `line ${line}, column ${column}: ${message}`, line, column }];
  };
  if (typeof source !== 'string' || source.trim() === '')
    return { problems: problem('must be a non-empty CEL expression') };
  if (source.length > RULE_LIMITS.maxLength) {
    return { problems: problem(`is ${source.length} characters long; at most ${RULE_LIMITS.maxLength} are allowed`) };
  }
  let program: ParseResult;
  try {
    program = renv.env.parse(source);
  } catch (err) {
    return { problems: problem(errorSummary(err), errorOffset(err)) };
  }
  // the walk first: a refused construct (matches, a deep chain) should be named as such, not as a type error
  const inspection = inspectAst(program.ast);
  if (inspection.problems.length > 0)
    return { problems: inspection.problems.flatMap((p) => problem(p.message, p.start)) };
  const typeError = checkTypes(program);
  if (typeError) {
    // every clause of a && / || chain that fails on its own, each at its place; else the whole's error
    const clauses = clauseErrors(renv, source, program.ast);
    if (clauses.length > 0) return { problems: clauses.flatMap((c) => problem(c.message, c.offset)) };
    return { problems: problem(typeError.message, typeError.offset) };
  }
  const result = program.check();
  const type = result.type ?? 'dyn';
  if (expected === 'bool' && type !== 'bool') {
    return {
      problems: problem(
        `must return a bool, but returns ${type}${type === 'dyn' ? ' (compare it, e.g. `context.vip == true`)' : ''}`,
        0,
      ),
    };
  }
  if (expected === 'number' && type !== 'double' && type !== 'int' && type !== 'dyn') {
    return { problems: problem(`must return a number, but returns ${type}`, 0) };
  }
  const { cost } = estimateCost(program.ast);
  if (cost > RULE_LIMITS.maxCost) {
    return {
      problems: problem(
        `its worst-case cost is estimated at ${formatUnits(cost)} units, over the budget of ${formatUnits(RULE_LIMITS.maxCost)} ` +
          '(a comprehension over a list or string the rule builds, or over long inputs, multiplies it; see "Cost" in docs/rules.md)',
        0,
      ),
    };
  }
  return { problems: [], checked: { program, inspection, cost } };
}

function checkTypes(program: ParseResult): { message: string; offset: number | undefined } | undefined {
  try {
    const result = program.check();
    return result.valid ? undefined : { message: errorSummary(result.error), offset: errorOffset(result.error) };
  } catch (err) {
    return { message: errorSummary(err), offset: errorOffset(err) };
  }
}

/** The operands of the && / || chains at the top of an expression, as parsed nodes. */
function clausesOf(node: ASTNode, out: ASTNode[] = []): ASTNode[] {
  if ((node.op === '&&' || node.op === '||') && out.length < 32) {
    for (const child of node.args as ASTNode[]) clausesOf(child, out);
  } else out.push(node);
  return out;
}

/** Each clause type-checked on its own (its source text), with its errors placed in the whole. */
function clauseErrors(
  renv: RuleEnvironment,
  source: string,
  root: ASTNode,
): Array<{ message: string; offset: number }> {
  const clauses = clausesOf(root);
  if (clauses.length < 2) return [];
  const out: Array<{ message: string; offset: number }> = [];
  for (const clause of clauses) {
    let error: ReturnType<typeof checkTypes>;
    try {
      error = checkTypes(renv.env.parse(source.slice(clause.start, clause.end)));
    } catch {
      continue;
    }
    if (error) out.push({ message: error.message, offset: clause.start + (error.offset ?? 0) });
  }
  return out;
}

function formatUnits(n: number): string {
  return Number.isFinite(n) && n < 1e15 ? Math.round(n).toLocaleString('en-US') : 'more than 10^15';
}

/** cel-js's message in the style of the others: lower-case, no trailing full stop. */
export function errorSummary(err: unknown): string {
  let text = String(err);
  if (err && typeof err === 'object') {
    const e = err as { summary?: unknown; message?: unknown };
    if (typeof e.summary === 'string' && e.summary) text = e.summary;
    else if (typeof e.message === 'string') text = e.message.split('\n')[0] || 'invalid expression';
  }
  return text.charAt(0).toLowerCase() + text.slice(1).replace(/\.$/, '');
}

function errorOffset(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { range?: { start?: unknown }; node?: { start?: unknown } };
  const start = e.range?.start ?? e.node?.start;
  return typeof start === 'number' ? start : undefined;
}

export function findListLiteral(node: ASTNode, name: string): number | undefined {
  const stack: ASTNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.op === 'call' && n.args[0] === 'in_list') {
      const first = n.args[1][0];
      if (first?.op === 'value' && first.args === name) return first.start;
    }
    if (n.op === 'value' || n.op === 'id') continue;
    const args = n.args as unknown;
    const push = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(push);
      else if (v && typeof v === 'object' && 'op' in v) stack.push(v as ASTNode);
    };
    push(args);
  }
  return undefined;
}
