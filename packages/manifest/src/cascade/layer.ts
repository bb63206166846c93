import type { ManifestLayerData } from "../schema/layer-schema.js";
import type { KeyLocator } from "../toml/locate-keys.js";

/** Where a layer sits in the cascade, lowest first. */
export type LayerKind = "builtin" | "user" | "workspace" | "file" | "set";

/** One layer the cascade considered. */
export interface ManifestLayer {
  kind: LayerKind;
  /** Absolute path of the layer's file (user, workspace, file). */
  file?: string;
  /** The `key=value` text of a `--set` overlay. */
  overlay?: string;
  /** False for an optional file (user, workspace) that does not exist. */
  present: boolean;
  /** Why a layer was skipped, when it was. */
  note?: string;
}

/** Which layer set a value, and where in that layer. */
export interface Provenance {
  layer: ManifestLayer;
  /** The key path as written in that layer (list indices are the layer's own). */
  keyPath: string;
  /** 1-based line in the layer's file, where it could be found. */
  line?: number;
  /** Why a builtin value was added, when it depends on other settings. */
  note?: string;
}

/** A validated layer with its relative paths already resolved. */
export interface ParsedLayer {
  layer: ManifestLayer;
  data: ManifestLayerData;
  locator?: KeyLocator;
}

/** A short name for a layer in listings and provenance columns. */
export function layerLabel(layer: ManifestLayer): string {
  return layer.kind === "set" ? `--set ${layer.overlay ?? ""}` : layer.kind;
}
