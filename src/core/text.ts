/** Text read from bytes, exactly: UTF-8 or nothing, never with bytes replaced. Pure. */

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The length of the well-formed UTF-8 sequence at `i`, or 0 when the byte there starts none (Unicode table 3-7). */
function sequenceAt(bytes: Uint8Array, i: number): number {
  const b = bytes[i] as number;
  if (b < 0x80) return 1;
  const inRange = (k: number, lo: number, hi: number) => {
    const c = bytes[i + k];
    return c !== undefined && c >= lo && c <= hi;
  };
  const tail = (from: number, to: number) => {
    for (let k = from; k <= to; k++) if (!inRange(k, 0x80, 0xbf)) return false;
    return true;
  };
  if (b >= 0xc2 && b <= 0xdf) return tail(1, 1) ? 2 : 0;
  if (b === 0xe0) return inRange(1, 0xa0, 0xbf) && tail(2, 2) ? 3 : 0;
  if ((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) return tail(1, 2) ? 3 : 0;
  if (b === 0xed) return inRange(1, 0x80, 0x9f) && tail(2, 2) ? 3 : 0;
  if (b === 0xf0) return inRange(1, 0x90, 0xbf) && tail(2, 3) ? 4 : 0;
  if (b >= 0xf1 && b <= 0xf3) return tail(1, 3) ? 4 : 0;
  if (b === 0xf4) return inRange(1, 0x80, 0x8f) && tail(2, 3) ? 4 : 0;
  return 0;
}

/**
 * `bytes` as text when they are UTF-8 (a byte-order mark kept as U+FEFF), else
 * the offset of the first byte that is not and its 1-based line: what a
 * message needs to point at it.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { offset: number; line: number } {
  try {
    return { text: decoder.decode(bytes) };
  } catch {
    let line = 1;
    for (let i = 0; i < bytes.length;) {
      const length = sequenceAt(bytes, i);
      if (length === 0) return { offset: i, line };
      if (bytes[i] === 0x0a) line++;
      i += length;
    }
    // The decoder and the table agree on what UTF-8 is; this is not reached.
    throw new Error('bytes the UTF-8 decoder refused are well-formed by the table');
  }
}

/** The words a message uses for where `bytes` stop being UTF-8: "byte 12 (line 3) is 0xe9". */
export function describeBadByte(bytes: Uint8Array, where: { offset: number; line: number }): string {
  const value = bytes[where.offset] ?? 0;
  return `byte ${where.offset} (line ${where.line}) is 0x${value.toString(16).padStart(2, '0')}`;
}
