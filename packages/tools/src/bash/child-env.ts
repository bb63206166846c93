/**
 * Names that look like they hold a secret. Matched per `_`-separated word so `KEYBOARD` or
 * `MONKEY` pass while `OPENAI_API_KEY`, `GH_TOKEN`, `DB_PASSWORD` and `AWS_SECRET_ACCESS_KEY` do not.
 */
const SECRET_WORD =
  /^(KEYS?|APIKEY|TOKENS?|SECRETS?|PASSWORD|PASSWD|PASS|PASSPHRASE|PWD_HASH|CREDENTIALS?|CREDS|AUTH|AUTHORIZATION|COOKIE|SESSION|PRIVATE|SIGNATURE|DSN)$/;

/** Provider key variables removed even when they do not look secret. */
export const PROVIDER_KEY_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "GEMINI_API_KEY",
  "OLLAMA_API_KEY",
] as const;

/** True for a variable bash must not inherit unless the manifest lists it in `[tools] bash_env`. */
export function isSecretLooking(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper === "PWD" || upper === "OLDPWD") return false;
  return (
    upper.split(/[_\-.]+/).some((word) => SECRET_WORD.test(word)) ||
    /(API_?KEY|TOKEN|SECRET|PASSWORD)$/.test(upper)
  );
}

/**
 * The environment a bash call runs with: the pod's environment without provider API keys, the
 * model's own key variable and anything secret-looking, except the variables `allow` names.
 */
export function childEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  options: { allow: readonly string[]; alsoRemove: readonly string[] },
): Record<string, string> {
  const remove = new Set<string>([...PROVIDER_KEY_VARIABLES, ...options.alsoRemove]);
  const allow = new Set(options.allow);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!allow.has(name) && (remove.has(name) || isSecretLooking(name))) continue;
    out[name] = value;
  }
  return out;
}
