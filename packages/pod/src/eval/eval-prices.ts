import { readFile } from "node:fs/promises";
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import { EvalPricesError } from "./errors.js";
import type { EvalPrices, ModelPrice } from "./eval-types.js";

const usd = z.number().finite().min(0);
const PriceSchema = z.strictObject({
  input: usd,
  output: usd,
  cache_read: usd.optional(),
  cache_write: usd.optional(),
});
const modelRef = z.string().regex(/^[^/]+\/.+$/, "expected a model ref <provider>/<model id>");
const PricesSchema = z.record(modelRef, PriceSchema);
/** The same table as code gives it (`EvalPrices`, camelCase). */
const CodePricesSchema = z.record(
  modelRef,
  z.strictObject({ input: usd, output: usd, cacheRead: usd.optional(), cacheWrite: usd.optional() }),
);

/**
 * Reads a price table: TOML (`.toml`) or JSON, one table per model ref with USD per million
 * tokens — `input`, `output`, and `cache_read`/`cache_write` (default: `input`). Throws
 * `EvalPricesError` naming the file and the key of the first problem.
 */
export async function readEvalPrices(file: string): Promise<EvalPrices> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new EvalPricesError(
      { file },
      `cannot be read (${(cause as NodeJS.ErrnoException).code ?? cause})`,
      {
        cause,
        hint: "check the path given to --prices",
      },
    );
  }
  let value: unknown;
  try {
    value = file.endsWith(".toml") ? parseToml(text) : JSON.parse(text);
  } catch (cause) {
    const problem = (cause as Error).message.split("\n")[0];
    throw new EvalPricesError({ file }, `not valid ${file.endsWith(".toml") ? "TOML" : "JSON"}: ${problem}`, {
      cause,
    });
  }
  return checkEvalPrices(value, file);
}

/** Checks a price table given in code or read from `file` (snake_case keys, as the file spells them). */
export function checkEvalPrices(value: unknown, file?: string): EvalPrices {
  const parsed = PricesSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = (issue?.path ?? []).map(String).join(".");
    throw new EvalPricesError(
      { ...(file === undefined ? {} : { file }), ...(key === "" ? {} : { key }) },
      issue?.message ?? "not a price table",
    );
  }
  const prices: Record<string, ModelPrice> = {};
  for (const [ref, price] of Object.entries(parsed.data)) {
    prices[ref] = {
      input: price.input,
      output: price.output,
      ...(price.cache_read === undefined ? {} : { cacheRead: price.cache_read }),
      ...(price.cache_write === undefined ? {} : { cacheWrite: price.cache_write }),
    };
  }
  return prices;
}

/** Checks `prices` as `runEval` is given them; throws `EvalPricesError` naming the key. */
export function checkCodePrices(prices: EvalPrices): EvalPrices {
  const parsed = CodePricesSchema.safeParse(prices);
  if (parsed.success) return prices;
  const issue = parsed.error.issues[0];
  const key = ["prices", ...(issue?.path ?? []).map(String)].join(".");
  throw new EvalPricesError({ key }, issue?.message ?? "not a price table");
}

/** What a cost is computed from: a run's token totals (`inputTokens` includes cache reads and writes). */
export interface PricedTokens {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** The USD cost of `tokens` at `price` (null without a price). */
export function costOf(tokens: PricedTokens, price: ModelPrice | undefined): number | null {
  if (price === undefined) return null;
  const fresh = Math.max(0, tokens.inputTokens - tokens.cacheReadTokens - tokens.cacheWriteTokens);
  const micro =
    fresh * price.input +
    tokens.cacheReadTokens * (price.cacheRead ?? price.input) +
    tokens.cacheWriteTokens * (price.cacheWrite ?? price.input) +
    tokens.outputTokens * price.output;
  return micro / 1_000_000;
}
