export {
  InvalidFileChangeError,
  RewindBlobError,
  RewindJournalError,
  RewindPathBlockedError,
  RewindPendingError,
  type RewindRefusal,
  RewindRefusedError,
} from "./errors.js";
export type { RewindProgress } from "./rewind-apply.js";
export type { RewindFileReport } from "./rewind-plan.js";
export {
  type RewindOptions,
  type RewindRecovery,
  type RewindReport,
  recoverRewind,
  rewindSession,
} from "./rewind-session.js";
