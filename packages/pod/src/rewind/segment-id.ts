import { randomBytes } from "node:crypto";

/**
 * A UUIDv7 for the new head segment, chosen before the rewind commits so that its journal names
 * it and a rerun after a crash creates that segment, or finds it made. Ids of the session store
 * are UUIDv7 too (their lexical order is creation order); this package does not depend on `uuid`.
 */
export function newSegmentId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
