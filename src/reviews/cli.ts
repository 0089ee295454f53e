// `vouch reviews list|stats` (docs/api.md, "Reviews"): the queue from a terminal, for scripts and
// on-call. Like `vouch policy`, the commands read the store directly as the host's operator, so
// they see every client's reviews of the environment (as an admin does over HTTP), and change
// nothing: claiming and resolving are a reviewer's acts, over the API or the console.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ENVIRONMENTS, type Environment, type Principal } from '../lib/principal.ts';
import { loadConfig, type Config } from '../config/env.ts';
import type { Store } from '../store/db.ts';
import { REVIEW_OUTCOMES, REVIEW_STATUSES, reviewRecord, type ReviewStatus } from './schemas.ts';
import { cursorOf, decodeCursor, listReviews } from './queue.ts';
import { reviewStats } from './stats.ts';

export interface ReviewCliSupport {
  withStore: <T>(config: Config, fn: (store: Store) => Promise<T>) => Promise<T>;
}

interface ListOptions {
  environment: Environment;
  status?: ReviewStatus;
  outcome?: string;
  entity?: string;
  limit: number;
  json?: boolean;
}

/** The host's operator: every client's reviews of one environment. */
const operator = (environment: Environment): Principal => ({
  id: 'cli',
  kind: 'client',
  clientId: '',
  role: 'admin',
  scopes: new Set(),
  environment,
});

const environmentOption = () =>
  new Option('--environment <environment>', 'whose reviews: live, or test (test mode)')
    .choices(ENVIRONMENTS)
    .default('live');

function count(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 100_000) throw new InvalidArgumentError('must be an integer from 1 to 100000');
  return n;
}

/** A table cell: tabs and line breaks would break the columns. */
const cell = (v: unknown): string => (v === null || v === undefined ? '-' : String(v).replace(/[\t\r\n]/g, ' '));

export function registerReviewCommands(program: Command, { withStore }: ReviewCliSupport): void {
  const reviews = program.command('reviews').description('the review queue (read only): list, stats');

  reviews
    .command('list')
    .description(
      'reviews, unresolved ones due first, then resolved ones newest first: tab-separated under a header line, or JSON lines with --json',
    )
    .addOption(
      new Option('--status <status>', 'only open (lapsed claims included), claimed or resolved reviews').choices(
        REVIEW_STATUSES,
      ),
    )
    .addOption(new Option('--outcome <outcome>', 'only reviews of this decision outcome').choices(REVIEW_OUTCOMES))
    .option('--entity <entity_id>', "only this entity's reviews")
    .addOption(new Option('--limit <n>', 'at most this many').argParser(count).default(1000))
    .option('--json', 'one review record per line (as GET /api/v1/reviews returns them)')
    .addOption(environmentOption())
    .action((o: ListOptions) =>
      withStore(loadConfig(), async (store) => {
        const viewer = { principal: operator(o.environment), now: Date.now() };
        if (!o.json)
          process.stdout.write(
            'id\tstatus\toutcome\tdue_at\toverdue\tscore\tamount\tcurrency\tassignee\tresolution\tentity_id\n',
          );
        let left = o.limit;
        let cursor: string | undefined;
        while (left > 0) {
          const page = await listReviews(
            store.db,
            viewer,
            {
              limit: Math.min(100, left),
              ...(o.status ? { status: o.status } : {}),
              ...(o.outcome ? { outcome: o.outcome } : {}),
              ...(o.entity ? { entityId: o.entity } : {}),
            },
            cursor === undefined ? undefined : decodeCursor(cursor),
          );
          for (const r of page.rows.map((row) => reviewRecord(row, viewer.now))) {
            process.stdout.write(
              o.json
                ? `${JSON.stringify(r)}\n`
                : `${[r.id, r.status, r.outcome, r.due_at, r.overdue ? 'yes' : 'no', r.score, r.amount, r.currency, r.assignee, r.resolution, r.entity_id].map(cell).join('\t')}\n`,
            );
          }
          left -= page.rows.length;
          const last = page.rows[page.rows.length - 1];
          if (!page.more || !last) break;
          cursor = cursorOf(last);
        }
      }),
    );

  reviews
    .command('stats')
    .description(
      'open, overdue, resolved in 24 hours, median minutes to resolve, by outcome, verdicts, review labels since the last fit',
    )
    .option('--json', 'the figures as GET /api/v1/reviews/stats returns them')
    .addOption(environmentOption())
    .action((o: { environment: Environment; json?: boolean }) =>
      withStore(loadConfig(), async (store) => {
        const s = await reviewStats(store.db, o.environment, undefined, Date.now());
        if (o.json) {
          process.stdout.write(`${JSON.stringify(s)}\n`);
          return;
        }
        const lines = [
          `open\t${s.open}`,
          `overdue\t${s.overdue}`,
          `resolved_24h\t${s.resolved_24h}`,
          `median_minutes_to_resolve\t${cell(s.median_minutes_to_resolve)}`,
          ...Object.entries(s.by_outcome).map(([outcome, c]) => `${outcome}\topen ${c.open}\tresolved ${c.resolved}`),
          `approved\t${s.agreement.approve}`,
          `declined\t${s.agreement.decline}`,
          `review_labels_since_last_fit\t${s.review_labels_since_last_fit}`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
