// A tool call the scope refuses is an error result for the model (it can try another path), so
// the turn goes on; the person watching is told which manifest key would allow the call. The
// tool result carries only text, so the scope's own fixed wording (packages/manifest
// src/scope/scope.ts, `Scope.check`) is what is recognised here.

const DENIAL =
  /(read|write) access to "([^"]+)" denied(?:: (outside the scope)|: (the scope allows read only)| by the deny rule on "([^"]+)" \((read|write)\))/;

/**
 * The hint for a tool result that is a scope denial, naming the manifest key to change
 * (`[[scope.allow]]` or `[[scope.deny]]`, docs/manifest.md); undefined for any other result.
 */
export function scopeDenialHint(summary: string): string | undefined {
  const match = DENIAL.exec(summary);
  if (match === null) return undefined;
  const [, want, path, outside, readOnly, denyTarget, denyPermission] = match;
  if (outside !== undefined) {
    return `to allow it, add a [[scope.allow]] rule covering "${path}" with permission = "${want}" to the manifest (docs/manifest.md, Scope)`;
  }
  if (readOnly !== undefined) {
    return `to allow it, add a [[scope.allow]] rule covering "${path}" with permission = "write" to the manifest (docs/manifest.md, Scope)`;
  }
  return `the [[scope.deny]] rule on "${denyTarget}" (permission = "${denyPermission}") refuses it; narrow or remove that rule in the manifest to allow it`;
}
