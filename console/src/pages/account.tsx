// Your account (docs/api.md, "People"): who you are, and your own second factor. Turning it on is
// three steps: a secret to put in an authenticator app (the otpauth:// link, or the secret typed by
// hand), a first code to confirm it, then the ten recovery codes, shown once. Turning it off takes
// a current code. An admin who resets someone else's does so from the users page.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { currentSession } from '../api.ts';
import { vouch } from '../api-client.ts';
import { ErrorBox, Field, Loader, fmtDate, fmtNumber, useAction, useLoad } from '../ui.tsx';
import './people.css';

interface SecondFactor {
  enabled: boolean;
  enabled_at: string | null;
  recovery_codes_left: number;
}

/** The secret in groups of four, as authenticator apps show a typed-in key. */
const grouped = (secret: string) => secret.replace(/(.{4})(?!$)/g, '$1 ');

export function AccountPage() {
  const session = currentSession();
  const state = useLoad(() => vouch.GET('/api/v1/auth/totp'), []);
  const [codes, setCodes] = useState<string[]>();
  const [message, setMessage] = useState<string>();
  return (
    <section aria-labelledby="h-account">
      <h1 id="h-account">Your account</h1>
      <p class="muted">
        {session?.name} · {session?.personRole}
      </p>
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
      <div class="panel second-factor" aria-labelledby="h-second-factor" role="region">
        <h2 id="h-second-factor">Second factor</h2>
        {codes ? (
          <RecoveryCodes codes={codes} onDone={() => (setCodes(undefined), state.reload())} />
        ) : (
          <Loader state={state} feature="Second factor">
            {(sf) =>
              sf.enabled ? (
                <TurnOff
                  factor={sf}
                  onOff={() => {
                    setMessage('The second factor is off: you sign in with your password alone.');
                    state.reload();
                  }}
                />
              ) : (
                <TurnOn
                  onOn={(c) => {
                    setMessage(undefined);
                    setCodes(c);
                  }}
                />
              )
            }
          </Loader>
        )}
      </div>
    </section>
  );
}

function TurnOn({ onOn }: { onOn: (codes: string[]) => void }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_url: string }>();
  const start = useAction({ settle: true });
  if (!enrolment)
    return (
      <>
        <p>
          <span class="badge user-deactivated">off</span> You sign in with your password alone. With a second factor,
          signing in also asks for a six-digit code from an authenticator app on your phone.
        </p>
        <ErrorBox error={start.error} what="Could not start" />
        <button
          class="primary"
          type="button"
          disabled={start.busy}
          onClick={() => void start.run(async () => setEnrolment(await vouch.POST('/api/v1/auth/totp')))}
        >
          Turn on a second factor
        </button>
      </>
    );
  return (
    <CodeForm
      label="Confirm the second factor"
      field="Code from the app"
      hint="The six digits the app shows now."
      failed="Not turned on"
      submit="Confirm and turn on"
      onCode={async (code) => onOn((await vouch.POST('/api/v1/auth/totp/confirm', { body: { code } })).recovery_codes)}
      steps={
        <li>
          <p>
            In your authenticator app, add an account: open this link on the phone, or type the key by hand (a
            time-based key, six digits, 30 seconds).
          </p>
          <Field label="Key">
            <input readOnly class="mono" name="totp_secret" value={grouped(enrolment.secret)} />
          </Field>
          <Field label="otpauth:// link">
            <input readOnly class="mono" name="otpauth_url" value={enrolment.otpauth_url} />
          </Field>
        </li>
      }
    />
  );
}

/**
 * A form that sends one six-digit code from the authenticator app (to confirm the second factor,
 * or to turn it off). With `steps`, the code field is the last step of a numbered list.
 */
function CodeForm({
  label,
  field,
  hint,
  failed,
  submit,
  danger,
  class: className,
  steps,
  onCode,
}: {
  label: string;
  field: string;
  hint: string;
  failed: string;
  submit: string;
  danger?: boolean;
  class?: string;
  steps?: ComponentChildren;
  onCode: (code: string) => Promise<void>;
}) {
  const [code, setCode] = useState('');
  const { busy, error, run } = useAction({ settle: true });
  const input = (
    <Field label={field} hint={hint}>
      <input
        name="code"
        autoComplete="one-time-code"
        inputMode="numeric"
        pattern="[0-9]{6}"
        maxLength={6}
        required
        value={code}
        onInput={(e) => setCode(e.currentTarget.value.trim())}
      />
    </Field>
  );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void run(() => onCode(code));
      }}
      aria-label={label}
      class={className}
    >
      {steps ? (
        <ol class="steps">
          {steps}
          <li>{input}</li>
        </ol>
      ) : (
        input
      )}
      <ErrorBox error={error} what={failed} />
      <button class={danger ? 'danger' : 'primary'} type="submit" disabled={busy || code.length !== 6}>
        {submit}
      </button>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div role="region" aria-label="Recovery codes">
      <p>
        <span class="badge user-active">on</span> <strong>Save these recovery codes now:</strong> they are shown only
        once. Each signs you in once, in place of a code, if you lose the phone.
      </p>
      <ul class="recovery-codes mono">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <button class="primary" type="button" onClick={onDone}>
        I have saved them
      </button>
    </div>
  );
}

function TurnOff({ factor, onOff }: { factor: SecondFactor; onOff: () => void }) {
  return (
    <>
      <p>
        <span class="badge user-active">on</span> Since {fmtDate(factor.enabled_at)};{' '}
        {fmtNumber(factor.recovery_codes_left)} of 10 recovery codes left.
      </p>
      <CodeForm
        label="Turn the second factor off"
        class="turn-off"
        field="Current code"
        hint="To turn it off, type the six digits your app shows now."
        failed="Not turned off"
        submit="Turn off the second factor"
        danger
        onCode={async (code) => {
          await vouch.DELETE('/api/v1/auth/totp', { body: { code } });
          onOff();
        }}
      />
    </>
  );
}
