import { HttpError } from "./http-error.js";

/** The ids podkit writes (UUIDv7) and every store accepts: nothing that could become a path or SQL. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * A session id from a URL, checked before it reaches a store (a path on the filesystem, a query
 * parameter on PostgreSQL): anything but letters, digits, "-" and "_" is a 400.
 */
export function checkedSessionId(raw: string | undefined): string {
  if (raw === undefined || !SESSION_ID.test(raw)) {
    throw new HttpError(
      400,
      `invalid session id ${JSON.stringify(raw ?? "")}`,
      "session ids are UUIDv7s as GET /sessions lists them",
    );
  }
  return raw;
}

/** True for a string shaped like a session (or segment) id. */
export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}
