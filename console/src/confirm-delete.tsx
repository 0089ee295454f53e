// The confirmation that deletes (removes, deactivates, ends) one thing: the same dialog on the
// keys, webhooks, lists and policies pages, so its buttons, busy state and error read alike
// wherever something goes away.
import type { ComponentChildren } from 'preact';
import { Confirm, ErrorBox, useAction } from './ui.tsx';

export function ConfirmDelete({
  title,
  confirmLabel,
  failed,
  remove,
  onCancel,
  children,
}: {
  title: string;
  confirmLabel: string;
  /** the error box's heading, "Could not …" */
  failed: string;
  /** sends the deletion, then closes the dialog; a throw leaves it open with the problem shown */
  remove: () => Promise<void>;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const { busy, error, run } = useAction();
  return (
    <Confirm
      title={title}
      confirmLabel={confirmLabel}
      danger
      busy={busy}
      onCancel={onCancel}
      onConfirm={() => void run(remove)}
    >
      {children}
      <ErrorBox error={error} what={failed} />
    </Confirm>
  );
}
