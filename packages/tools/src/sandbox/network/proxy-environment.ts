/** Variables HTTP clients (curl, git, pip, npm, Python's urllib, …) read their proxy from. */
const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];

/**
 * `env` with every proxy variable pointing at `proxyUrl` and the exclusion lists removed: with
 * no network of its own, a host "excluded from the proxy" would only be unreachable.
 * (`NODE_USE_ENV_PROXY` makes Node 24+ `fetch` honour them; older Node ignores the variables.)
 */
export function proxyEnvironment(
  env: Readonly<Record<string, string>>,
  proxyUrl: string,
): Record<string, string> {
  const out: Record<string, string> = { ...env };
  delete out.NO_PROXY;
  delete out.no_proxy;
  for (const name of PROXY_VARIABLES) out[name] = proxyUrl;
  out.NODE_USE_ENV_PROXY = "1";
  return out;
}
