import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ContextSection } from "./context-section.js";

/** Where the `notes` section reads from, relative to the workspace. */
export const NOTES_FILE = ".podkit/NOTES.md";

/**
 * The builtin `notes` section: `<workspace>/.podkit/NOTES.md` as it is now. Loaded only when the
 * file exists and holds more than whitespace; a missing file is no section, not an error.
 */
export const notesSection: ContextSection<string> = {
  id: "notes",
  async load(state) {
    let text: string;
    try {
      // One small file: no abort signal (a listener on the run's composite signal per request costs more than the read).
      text = await readFile(join(state.workspace, NOTES_FILE), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    const trimmed = text.trim();
    return trimmed === "" ? null : trimmed;
  },
  render: (notes) => notes,
};
