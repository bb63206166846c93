import { isAbsolute, resolve } from "node:path";
import type { LoadedManifest } from "@podkit/manifest";
import type { EvalOrigin, EvalVariant } from "./eval-types.js";

/** The variant's manifest with its prompt pack in `[pod].prompt_pack` (a relative pack is the workspace's). */
export function variantManifest(variant: EvalVariant): LoadedManifest {
  const loaded = variant.manifest;
  if (variant.pack === undefined) return loaded;
  const pack = isAbsolute(variant.pack) ? variant.pack : resolve(loaded.workspace, variant.pack);
  return { ...loaded, manifest: { ...loaded.manifest, pod: { ...loaded.manifest.pod, prompt_pack: pack } } };
}

/** What an item's `eval.origin` records of the variant: its label, or what it was made from. */
export function variantOrigin(variant: EvalVariant): EvalOrigin["variant"] {
  const manifest = variant.label?.manifest ?? variant.manifest.file;
  const model =
    variant.label?.model ??
    (typeof variant.model === "string" ? variant.model : variant.manifest.manifest.model.ref);
  return {
    ...(manifest === undefined ? {} : { manifest }),
    model,
    ...(variant.pack === undefined ? {} : { pack: variant.pack }),
    ...(variant.label?.set === undefined || variant.label.set.length === 0
      ? {}
      : { set: [...variant.label.set] }),
  };
}
