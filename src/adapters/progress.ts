/** Build progress from Ninja's `[n/N]` lines: a bar on a terminal, sparse plain lines otherwise. */
export interface Progress {
  line(text: string): void;
  done(): void;
}

const NINJA = /^\[(\d+)\/(\d+)\]\s*(.*)$/;

export function createProgress(
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number },
  label: string,
  now: () => number = Date.now,
): Progress {
  const tty = stream.isTTY === true;
  let lastPlain = 0;
  let lastPercent = -1;
  let drawn = false;
  return {
    line(text) {
      const m = NINJA.exec(text);
      if (!m) return;
      const n = Number(m[1]);
      const total = Number(m[2]);
      const percent = Math.floor((100 * n) / total);
      if (tty) {
        const width = 30;
        const filled = Math.round((width * n) / total);
        const what = (m[3] ?? '').replace(/^Building \S+ object /, '');
        const room = Math.max(10, (stream.columns ?? 100) - width - label.length - 20);
        stream.write(
          `\r\x1b[2K${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${n}/${total} ${what.slice(-room)}`,
        );
        drawn = true;
      } else if (percent >= lastPercent + 10 || now() - lastPlain >= 30_000 || n === total) {
        stream.write(`${label}: ${n}/${total} (${percent}%)\n`);
        lastPlain = now();
        lastPercent = percent;
      }
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}
