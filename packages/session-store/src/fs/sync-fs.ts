import * as nodeFs from "node:fs";

/**
 * The synchronous file operations the write path uses. Injectable so tests can inject real
 * faults (a failing or short write) into real files; defaults to `node:fs`.
 */
export type SyncFs = Pick<
  typeof nodeFs,
  | "openSync"
  | "closeSync"
  | "writeSync"
  | "readSync"
  | "fstatSync"
  | "statSync"
  | "ftruncateSync"
  | "fsyncSync"
  | "renameSync"
  | "linkSync"
  | "unlinkSync"
  | "mkdirSync"
  | "readFileSync"
>;

export const defaultSyncFs: SyncFs = nodeFs;

/** The errno code of a Node system error, if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}
