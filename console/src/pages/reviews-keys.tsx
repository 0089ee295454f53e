// The review desk's keyboard: single keys, shown on the page beside what they do, ignored while
// one types in a field, holds a modifier, or has a dialog open.
import { useLayoutEffect, useRef } from 'preact/hooks';

export interface KeyAction {
  key: string;
  /** what the key does, as the legend says it */
  does: string;
  run: () => void;
}

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) || el.isContentEditable;
}

/** Binds `actions` to their keys (case-insensitive; "Enter" as named) while the component is shown. */
export function useKeys(actions: KeyAction[]): void {
  const current = useRef(actions);
  current.current = actions;
  // Bound before the page is painted (a layout effect): a key pressed as soon as the page shows is never lost.
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (
        e.defaultPrevented ||
        e.ctrlKey ||
        e.metaKey ||
        e.altKey ||
        typing(e.target) ||
        document.querySelector('dialog[open]')
      )
        return;
      // Enter on a focused link or button is that element's own; the desk's Enter is for the page
      if (e.key === 'Enter' && (e.target as HTMLElement | null)?.closest?.('a, button')) return;
      const action = current.current.find((a) =>
        a.key.length === 1 ? a.key.toLowerCase() === e.key.toLowerCase() : a.key === e.key,
      );
      if (!action) return;
      e.preventDefault();
      action.run();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

/** The legend: every key bound on this page and what it does. */
export function KeyLegend({ actions }: { actions: KeyAction[] }) {
  return (
    <ul class="key-legend" aria-label="Keyboard">
      {actions.map((a) => (
        <li key={a.key}>
          <kbd>{a.key}</kbd> {a.does}
        </li>
      ))}
    </ul>
  );
}
