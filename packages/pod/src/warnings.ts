/** A problem podkit reports and then works around (the pod keeps going). */
export type PodWarning =
  | {
      readonly code: "prompt_pack.unknown_key";
      readonly message: string;
      readonly layer: string;
      readonly file: string;
      readonly key: string;
    }
  | { readonly code: "agents_md.unreadable"; readonly message: string; readonly file: string }
  /**
   * A pod's runtime warnings: dropped notifications, a drift fork, a tool package's warning, the
   * worker's (provider warnings, a truncated answer, a dropped tool call), a failed after-turn job,
   * an event listener that threw.
   */
  | {
      readonly code:
        | "pod.notifications_dropped"
        | "pod.drift_fork"
        | "pod.tools"
        | "pod.worker"
        | "pod.session_write"
        | "pod.other_branches"
        | "pod.after_turn_job"
        | "pod.context_section"
        | "pod.compaction_failed"
        | "pod.listener"
        | "pod.subpods"
        | "pod.skills";
      readonly message: string;
    };

/**
 * Where warnings go: every warning a pod reports, from construction to `close()`. Each one
 * raised after construction is also shown as a `warning` event to the pod's listeners at that
 * moment (one path, two audiences: the sink is the record, the event is for display).
 */
export type WarningSink = (warning: PodWarning) => void;

/** Default sink: a Node process warning (printed once to stderr by Node). */
export const processWarningSink: WarningSink = (warning) => {
  process.emitWarning(warning.message, { type: "PodkitWarning", code: warning.code });
};
