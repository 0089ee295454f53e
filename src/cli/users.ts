// `vouch users invite|list|set-role|deactivate` (docs/api.md, "People"): people, straight in the
// store, as an admin at the machine would manage them (the first admin of a new deployment is
// invited this way). Each change is audited with the CLI as its actor. Standard output is the
// result only: the invitation link and token (once), the table, or the changed user.
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config/env.ts';
import type { Actor } from '../lib/principal.ts';
import { isPersonRole, PERSON_ROLES, type PersonRole } from '../lib/person-roles.ts';
import { CommandFailure, withStore } from './support.ts';
import { listUsers } from '../people/repository.ts';
import { changeUser, inviteUser, inviterId, PeopleError, userViewWith, type UserView } from '../people/service.ts';
import { resolveActors } from '../audit-log/actors.ts';

/** What the log names as the actor of a command typed at the machine (the operating-system user when known). */
function cliActor(env: NodeJS.ProcessEnv = process.env): Actor {
  const who = env.USER ?? env.LOGNAME;
  return { type: 'client', id: 'cli', name: who ? `vouch cli (${who})` : 'vouch cli' };
}

function personRole(raw: string): PersonRole {
  if (!isPersonRole(raw)) throw new InvalidArgumentError(`unknown role "${raw}" (${PERSON_ROLES.join(', ')})`);
  return raw;
}

function oneLine(label: string) {
  return (raw: string): string => {
    // eslint-disable-next-line no-control-regex
    if (raw.trim() === '' || raw.length > 254 || /[\u0000-\u001f\u007f-\u009f]/.test(raw))
      throw new InvalidArgumentError(`${label} must be 1 to 254 printable characters on one line`);
    return raw;
  };
}

function table(users: readonly UserView[]): string {
  const columns: [string, (u: UserView) => string][] = [
    ['ID', (u) => u.id],
    ['STATUS', (u) => u.status],
    ['ROLE', (u) => u.role],
    ['EMAIL', (u) => u.email],
    ['NAME', (u) => u.name],
  ];
  const rows = [columns.map(([t]) => t), ...users.map((u) => columns.map(([, cell]) => cell(u)))];
  const widths = columns.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`;
}

const failure = (err: unknown): never => {
  if (err instanceof PeopleError) throw new CommandFailure(err.message);
  throw err;
};

export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('people at the desk: invitations, roles, deactivation');
  users
    .command('invite')
    .description('invite a person; prints the one-time invitation link and token (valid 72 hours)')
    .requiredOption('--email <email>', 'their e-mail address (the sign-in name)', oneLine('--email'))
    .requiredOption('--name <name>', 'their name, as the console and the audit log show it', oneLine('--name'))
    .requiredOption('--role <role>', PERSON_ROLES.join(', '), personRole)
    .action(async (options: { email: string; name: string; role: PersonRole }) => {
      const config = loadConfig();
      await withStore(config, async (store) => {
        const { user, token, expiresAt } = await inviteUser(store, cliActor(), options).catch(failure);
        const base = config.publicUrl ?? `http://${config.host}:${config.port}`;
        process.stdout.write(
          `user_id=${user.id}\ninvitation_url=${base}/console/?invitation=${token}\ninvitation_token=${token}\n` +
            `expires_at=${new Date(expiresAt).toISOString()}\n# shown once; send it to ${user.email}\n`,
        );
      });
    });
  users
    .command('list')
    .description('list people: a table, or --json for scripts')
    .option('--json', 'a JSON array of users (id, email, name, role, status, created_at)')
    .action(async (options: { json?: boolean }) => {
      await withStore(loadConfig(), async (store) => {
        const all: UserView[] = [];
        for (let after: string | undefined; ;) {
          const page = await listUsers(store.db, after, 500);
          const inviters = await resolveActors(store.db, page.map(inviterId));
          all.push(...page.map((row) => userViewWith(row, inviters)));
          if (page.length < 500) break;
          after = page[page.length - 1]!.id;
        }
        process.stdout.write(options.json ? `${JSON.stringify(all, null, 2)}\n` : table(all));
      });
    });
  users
    .command('set-role')
    .description("change a person's role; their sessions end (exit status 1 if there is no such user)")
    .argument('<user_id>')
    .argument('<role>', PERSON_ROLES.join(', '), personRole)
    .action(async (id: string, role: PersonRole) => {
      await withStore(loadConfig(), async (store) => {
        const user = await changeUser(store, cliActor(), id, { role }).catch(failure);
        process.stdout.write(`${user.id} ${user.role}\n`);
      });
    });
  users
    .command('deactivate')
    .description('deactivate a person: their sessions and tokens stop at once (exit status 1 if there is no such user)')
    .argument('<user_id>')
    .action(async (id: string) => {
      await withStore(loadConfig(), async (store) => {
        const user = await changeUser(store, cliActor(), id, { status: 'deactivated' }).catch(failure);
        process.stdout.write(`${user.id} deactivated\n`);
      });
    });
}
