// One progress line on a stream (standard error): rewritten in place on a terminal, one line per
// update elsewhere (a log keeps every step), so standard output stays the command's result alone.
// Used by `vouch labels import` and `vouch policy fit|backtest --progress`.

export interface ProgressLine {
  /** shows `text` as the current state */
  update(text: string): void;
  /** ends the line (a terminal's cursor moves past it); `text`, when given, is the last state */
  end(text?: string): void;
}

export function progressLine(stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr): ProgressLine {
  const tty = stream.isTTY === true;
  let open = false;
  let last = '';
  return {
    update(text) {
      if (text === last) return;
      last = text;
      // \x1b[K clears what a longer previous line left behind.
      stream.write(tty ? `\r${text}\x1b[K` : `${text}\n`);
      open = tty;
    },
    end(text) {
      if (text !== undefined) this.update(text);
      if (open) stream.write('\n');
      open = false;
    },
  };
}

/** `[#########...........]  45 %` for a fraction in 0 … 1. */
export function bar(fraction: number, width = 24): string {
  const f = Math.min(1, Math.max(0, fraction));
  const filled = Math.round(f * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(f * 100)).padStart(3)} %`;
}
