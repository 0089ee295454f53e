// Where the audit log and the records that keep who changed them find a principal's name
// (docs/api.md, "Audit log", "Who"): the owners of the tables that hold names, handed to the audit
// log once per process. Imported for its effect by every entry point (src/app.ts, src/cli/program.ts).
import { useActorNames } from './audit-log/actors.ts';
import { clientNamesIn } from './auth/client-repository.ts';
import { keyNamesIn } from './keys/repository.ts';
import { userNamesIn } from './people/repository.ts';

// Clients first: an API key or a person named by an id a client also holds is named as the key or person.
useActorNames([
  { type: 'client', namesIn: clientNamesIn },
  { type: 'client', namesIn: keyNamesIn },
  { type: 'user', namesIn: userNamesIn },
]);
