import type { CommandInput } from "../commands/command.js";
import { UsageError } from "../errors.js";

/** A positive integer option (`--concurrency 4`), or undefined when not given. */
export function positiveInteger(value: CommandInput["values"][string], option: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw new UsageError(`${option} expects a positive integer, got "${String(value)}"`, {
      hint: `e.g. ${option} 4`,
    });
  }
  return parsed;
}
