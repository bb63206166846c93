import { z } from "zod";

/**
 * Per-request model settings, in the manifest's spelling. `reasoning` is an effort string
 * ("low" | "medium" | "high" | …) or a thinking budget in tokens.
 */
export const RequestConfigSchema = z
  .object({
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    top_k: z.number().int().optional(),
    stop_sequences: z.array(z.string()).optional(),
    reasoning: z.union([z.string().min(1), z.number().int().positive()]).optional(),
    /**
     * The provider's structured output (a typed answer's `native` strategy, docs/output.md): the
     * answer text must be JSON matching `schema`. Part of the config, so it is sent on every request
     * from the session's first, the same bytes each time.
     */
    response_format: z
      .object({
        type: z.literal("json"),
        schema: z.record(z.string(), z.unknown()),
        name: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type RequestConfig = z.infer<typeof RequestConfigSchema>;
