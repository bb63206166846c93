import { describe, expect, it } from "vitest";
import { HostAllowList } from "../../src/sandbox/network/host-allow.js";

describe("[sandbox.network] allow", () => {
  it("names hosts exactly, on every port or the one given", () => {
    const list = new HostAllowList(["api.github.com", "127.0.0.1:8080", "[::1]:443", "Registry.NPMjs.org."]);
    expect(list.allows("api.github.com", 443)).toBe(true);
    expect(list.allows("API.GitHub.com", 80)).toBe(true);
    expect(list.allows("evil-api.github.com", 443)).toBe(false);
    expect(list.allows("api.github.com.evil.org", 443)).toBe(false);
    expect(list.allows("127.0.0.1", 8080)).toBe(true);
    expect(list.allows("127.0.0.1", 8081)).toBe(false);
    expect(list.allows("localhost", 8080)).toBe(false);
    expect(list.allows("[::1]", 443)).toBe(true);
    expect(list.allows("::1", 80)).toBe(false);
    expect(list.allows("registry.npmjs.org", 443)).toBe(true);
  });

  it("*.domain covers its subdomains, not the domain itself", () => {
    const list = new HostAllowList(["*.example.com:443"]);
    expect(list.allows("a.example.com", 443)).toBe(true);
    expect(list.allows("b.a.example.com", 443)).toBe(true);
    expect(list.allows("example.com", 443)).toBe(false);
    expect(list.allows("notexample.com", 443)).toBe(false);
    expect(list.allows("a.example.com", 80)).toBe(false);
  });

  it("an empty list allows nothing", () => {
    expect(new HostAllowList([]).allows("localhost", 80)).toBe(false);
  });
});
