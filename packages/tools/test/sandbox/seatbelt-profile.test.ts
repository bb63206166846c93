import { Scope } from "@podkit/manifest";
import { describe, expect, it } from "vitest";
import { sbplString, seatbeltProfile } from "../../src/sandbox/seatbelt/seatbelt-profile.js";

// The macOS profile cannot run here (no Mac in CI, docs/sandbox.md); its text is pinned instead.
async function policy() {
  const scope = await Scope.fromRules(
    [
      { target: "/Users/ada/project", permission: "write" },
      { target: "/Users/ada/reference", permission: "read" },
      { target: "/Users/ada/flat", permission: "read", recursive: false },
    ],
    [
      { target: "/Users/ada/project/.env", permission: "read" },
      { target: "/Users/ada/project/vendor", permission: "write" },
    ],
  );
  return { scope, protectedPaths: ["/Users/ada/project/.podkit"], networkAllow: [], home: "/Users/ada" };
}

describe("the Seatbelt profile", () => {
  it("denies by default, grants the scope, then takes back what the deny rules and podkit's own files need", async () => {
    const profile = seatbeltProfile(await policy(), {
      tmpDirs: ["/private/var/folders/xy/T/podkit-sandbox-tmp-1"],
    });
    const lines = profile.trimEnd().split("\n");
    expect(lines.slice(0, 2)).toEqual(["(version 1)", "(deny default)"]);
    expect(lines).toContain(
      '(allow file-read* file-write* (subpath "/private/var/folders/xy/T/podkit-sandbox-tmp-1"))',
    );
    const grants = [
      '(allow file-read* (subpath "/Users/ada/project"))',
      '(allow file-write* (subpath "/Users/ada/project"))',
      '(allow file-read* (subpath "/Users/ada/reference"))',
      '(allow file-read* (literal "/Users/ada/flat") (regex #"^\\/Users\\/ada\\/flat/[^/]+$"))',
    ];
    const denials = [
      '(deny file-read* file-write* (subpath "/Users/ada/project/.env"))',
      '(deny file-write* (subpath "/Users/ada/project/vendor"))',
      '(deny file-write* (subpath "/Users/ada/project/.podkit"))',
      "(deny network*)",
    ];
    // In SBPL the last matching rule wins: every denial must come after every grant.
    const at = (line: string) => {
      expect(lines, line).toContain(line);
      return lines.indexOf(line);
    };
    const lastGrant = Math.max(...grants.map(at));
    for (const denial of denials) expect(at(denial)).toBeGreaterThan(lastGrant);
    expect(profile).not.toContain('/Users/ada/reference"))\n(allow file-write*');
    expect(profile).not.toContain("network-outbound");
    expect(profile).not.toMatch(/subpath "\/Users\/ada"\)/);
  });

  it("lets the network reach only the proxy's loopback port when hosts are allowed", async () => {
    const profile = seatbeltProfile(await policy(), { proxyPort: 41234 });
    expect(profile.trimEnd().split("\n").slice(-2)).toEqual([
      "(deny network*)",
      '(allow network-outbound (remote ip "localhost:41234"))',
    ]);
  });

  it("quotes paths so that none can end the string or the rule", () => {
    expect(sbplString('/tmp/a"b\\c')).toBe('"/tmp/a\\"b\\\\c"');
  });
});
