// Four eyes' setting (docs/api.md, "Four eyes"; admins): which areas wait for a second person.
import { useState } from 'preact/hooks';
import { vouch } from '../api-client.ts';
import { may } from '../permissions.ts';
import { FOUR_EYES_AREAS, type FourEyesArea } from '../people-types.ts';
import { CheckboxGroup, ErrorBox, Loader, useAction, useLoad } from '../ui.tsx';

const AREA_NAME: Record<FourEyesArea, string> = {
  rules: 'rules: activating a rule, or changing an active one',
  policies: 'policies: activating a policy',
  lists: 'lists: deleting a list',
};

/** Which areas four eyes holds (settings:read to see, an admin's settings:write to change). */
export function FourEyesSettings() {
  const state = useLoad(() => vouch.GET('/api/v1/settings'), []);
  const [draft, setDraft] = useState<FourEyesArea[]>();
  const { busy, error, run } = useAction({ settle: true });
  const [saved, setSaved] = useState(false);
  const write = may('settings:write', 'admin');
  return (
    <section class="panel four-eyes" aria-labelledby="h-four-eyes">
      <h2 id="h-four-eyes">Four eyes</h2>
      <Loader state={state} feature="The settings">
        {(s) => {
          const chosen = draft ?? s.four_eyes;
          return write ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                setSaved(false);
                void run(async () => {
                  const next = await vouch.PUT('/api/v1/settings', { body: { four_eyes: chosen } });
                  setDraft(next.four_eyes);
                  setSaved(true);
                });
              }}
            >
              <CheckboxGroup
                legend="What needs a second person"
                options={FOUR_EYES_AREAS}
                chosen={chosen}
                onChange={(next) => {
                  setSaved(false);
                  setDraft(FOUR_EYES_AREAS.filter((a) => next.includes(a)));
                }}
              />
              <ul class="muted small">
                {FOUR_EYES_AREAS.map((a) => (
                  <li key={a}>{AREA_NAME[a]}</li>
                ))}
              </ul>
              <ErrorBox error={error} what="Could not save the settings" />
              {saved && (
                <p class="ok-msg" role="status">
                  Saved: {chosen.length ? chosen.join(', ') : 'nothing'} now needs a second person.
                </p>
              )}
              <button type="submit" class="primary" disabled={busy}>
                Save
              </button>
            </form>
          ) : (
            <p>
              {s.four_eyes.length
                ? `A second person approves: ${s.four_eyes.map((a) => AREA_NAME[a]).join('; ')}.`
                : 'Four eyes is off: changes apply when they are made.'}
            </p>
          );
        }}
      </Loader>
    </section>
  );
}
