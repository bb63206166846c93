import { v7 } from "uuid";
import { SessionStoreUsageError } from "./errors.js";

/** A new UUIDv7: lexical order of ids is their creation order. */
export function newId(): string {
  return v7();
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** True for an id `assertSafeId` accepts (a name read from the store's own directory, say). */
export function isSafeId(id: string): boolean {
  return SAFE_ID.test(id);
}

/** Rejects ids that could escape the store directory or collide with its own files. */
export function assertSafeId(id: string, what: "session" | "segment"): void {
  if (!SAFE_ID.test(id)) {
    throw new SessionStoreUsageError(
      `invalid ${what} id ${JSON.stringify(id)}: use letters, digits, "-" and "_" only (podkit uses UUIDv7 ids)`,
    );
  }
}
