// Deterministic entry text for sequence number `seq`: multi-byte UTF-8 throughout, sizes from a
// few bytes to 4.6 KB, so a kill can land inside a long write.
export function payloadOf(seq) {
  const size = seq % 37 === 0 ? 512 : seq % 5;
  return `seq ${seq} ${"ü日😀".repeat(size)} end`;
}

/** A 12 MB entry text for `seq`: its single write takes long enough for a kill to land inside it. */
export function bigPayloadOf(seq) {
  return `seq ${seq} big ${"ü日😀".repeat(1_400_000)} end`;
}

/** The sequence number a payload text carries, or undefined. */
export function seqOf(text) {
  const match = /^seq (\d+) /.exec(text);
  return match === null ? undefined : Number(match[1]);
}
