/** Deterministic entry text for sequence number `seq` (see payload.mjs). */
export function payloadOf(seq: number): string;
/** The large entry text for `seq` (see payload.mjs). */
export function bigPayloadOf(seq: number): string;
/** The sequence number a payload text carries, or undefined. */
export function seqOf(text: string): number | undefined;
