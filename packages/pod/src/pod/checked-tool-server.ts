import { type ToolCallItem, type ToolOutput, type ToolOutputLimits, ToolServer } from "@podkit/llm-worker";

/**
 * The pod's tool server when `PodOptions.toolStartCheck` is given: the check runs synchronously
 * right before each call starts — after every decision about it, with nothing awaited in between —
 * and a check that throws stops the call before its tool runs (the turn then fails with that error).
 */
export class CheckedToolServer extends ToolServer {
  constructor(
    private readonly check: (call: Readonly<ToolCallItem>) => void,
    options: { outputLimits?: ToolOutputLimits } = {},
  ) {
    super(options);
  }

  override executeUncapped(call: ToolCallItem, signal: AbortSignal): Promise<ToolOutput> {
    try {
      this.check(call);
    } catch (error) {
      return Promise.reject(error);
    }
    return super.executeUncapped(call, signal);
  }
}
