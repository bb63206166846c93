/** One `[sandbox.network] allow` entry, parsed. */
interface AllowedHost {
  /** Lower case, without brackets (`::1`) or a trailing dot. */
  readonly name: string;
  /** `*.example.com`: the subdomains of `name`, not `name` itself. */
  readonly subdomains: boolean;
  /** Unset: every port. */
  readonly port: number | undefined;
}

function parseEntry(entry: string): AllowedHost {
  const text = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { name: bracketed[1] as string, subdomains: false, port: portOf(bracketed[2]) };
  const [host = "", port] = text.split(":");
  const subdomains = host.startsWith("*.");
  return { name: normalize(subdomains ? host.slice(2) : host), subdomains, port: portOf(port) };
}

function portOf(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}

function normalize(host: string): string {
  const lower = host.toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

/**
 * The allow list of a sandbox's network: a host is reachable when an entry names it (any port, or
 * the entry's), or when an entry `*.<domain>` names a domain it lies in. Names are compared without
 * resolving them, so an allowed name is reached wherever it resolves to, and an IP address is only
 * reachable when it is listed as one.
 */
export class HostAllowList {
  private readonly entries: readonly AllowedHost[];

  constructor(readonly allow: readonly string[]) {
    this.entries = allow.map(parseEntry);
  }

  allows(host: string, port: number): boolean {
    const name = normalize(host);
    return this.entries.some(
      (entry) =>
        (entry.port === undefined || entry.port === port) &&
        (entry.subdomains ? name.endsWith(`.${entry.name}`) : name === entry.name),
    );
  }
}
