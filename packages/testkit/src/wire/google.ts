import { ScriptError } from "../errors.js";
import type { ScriptedPart, SseEvent } from "../types.js";
import { flattenToPartialArgs } from "./google-partial-args.js";
import {
  data,
  type PartsResponse,
  type RenderContext,
  rawData,
  resolveFinishReason,
  resolveUsage,
  resultCallId,
  splitIntoChunks,
  toolArgumentsJson,
  unsupported,
} from "./render-context.js";

type GooglePart = Record<string, unknown>;
type ToolCallPart = Extract<ScriptedPart, { type: "tool_call" }>;

interface ChunkExtras {
  candidate?: Record<string, unknown>;
  usageMetadata?: Record<string, unknown>;
}

const finishReasons = {
  stop: "STOP",
  tool_calls: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
  pause_turn: undefined,
} as const;

/**
 * Renders a scripted turn as Gemini `streamGenerateContent?alt=sse` chunks: text and `thought: true` parts
 * (the signature as `thoughtSignature` on the last thought piece), consecutive tool calls together in one
 * chunk of `functionCall` parts as Gemini sends parallel calls, and a closing chunk with an empty text part,
 * the finish reason and `usageMetadata`. A tool call with `chunkSize` is streamed the Vertex way
 * (`streamFunctionCallArguments`): a `willContinue` head, `partialArgs` pieces, an empty terminal part.
 * Redacted reasoning has no Gemini form and is dropped; Gemini reports no cache writes.
 */
export function renderGoogle(response: PartsResponse, ctx: RenderContext): SseEvent[] {
  const usage = resolveUsage(response);
  const responseId = response.id ?? ctx.nextId("double-response-");
  const chunk = (parts: GooglePart[], extra: ChunkExtras = {}): SseEvent => ({
    data: data({
      candidates: [{ content: { parts, role: "model" }, index: 0, ...extra.candidate }],
      ...(extra.usageMetadata ? { usageMetadata: extra.usageMetadata } : {}),
      modelVersion: ctx.model,
      responseId,
    }),
  });
  const events: SseEvent[] = [];
  let pendingCalls: GooglePart[] = [];
  const flushCalls = () => {
    if (pendingCalls.length > 0) events.push(chunk(pendingCalls));
    pendingCalls = [];
  };

  const finishReason = finishReasons[resolveFinishReason(response)];
  if (finishReason === undefined) unsupported("google", 'finish reason "pause_turn"');
  let lastServerCall: string | undefined;
  for (const [index, part] of response.parts.entries()) {
    const where = `google script part ${index} (${part.type})`;
    if (part.type !== "tool_call") flushCalls();
    switch (part.type) {
      case "text":
        for (const text of splitIntoChunks(part.text, part.chunkSize, where)) events.push(chunk([{ text }]));
        break;
      case "reasoning": {
        const pieces = splitIntoChunks(part.text, part.chunkSize, where);
        pieces.forEach((text, i) => {
          const signed = i === pieces.length - 1 && part.signature !== undefined;
          events.push(
            chunk([{ text, thought: true, ...(signed ? { thoughtSignature: part.signature } : {}) }]),
          );
        });
        break;
      }
      case "redacted_reasoning":
        break;
      case "tool_call":
        if (part.chunkSize === undefined) {
          pendingCalls.push(completeCall(part));
        } else {
          flushCalls();
          for (const parts of streamedCall(part, where)) events.push(chunk(parts));
        }
        break;
      case "server_tool_call": {
        const id = part.id ?? ctx.nextId("double-server-call-");
        lastServerCall = id;
        // Code execution is Gemini's executableCode part; other server tools are toolCall parts.
        events.push(
          chunk([
            part.name === "code_execution"
              ? { executableCode: { language: "PYTHON", ...part.input } }
              : { toolCall: { toolType: part.name, args: part.input, id } },
          ]),
        );
        break;
      }
      case "server_tool_result":
        events.push(
          chunk([
            part.name === "code_execution"
              ? { codeExecutionResult: part.result }
              : {
                  toolResponse: {
                    toolType: part.name,
                    response: part.result,
                    id: resultCallId(part, lastServerCall, where),
                  },
                },
          ]),
        );
        break;
      case "error":
        // Gemini reports a failure after the stream began as a JSON error object in place of a chunk.
        events.push({ data: data({ error: part.error }) });
        return events;
      case "raw":
        events.push({ ...(part.event !== undefined ? { event: part.event } : {}), data: rawData(part) });
        break;
      case "compaction":
        unsupported("google", part.type, index);
    }
  }
  flushCalls();

  const visibleOutput = Math.max(0, usage.outputTokens - usage.reasoningTokens);
  events.push(
    chunk([{ text: "" }], {
      candidate: { finishReason },
      usageMetadata: {
        promptTokenCount: usage.inputTokens,
        candidatesTokenCount: visibleOutput,
        totalTokenCount: usage.inputTokens + usage.outputTokens,
        ...(usage.reasoningTokens > 0 ? { thoughtsTokenCount: usage.reasoningTokens } : {}),
        ...(usage.cacheReadTokens > 0 ? { cachedContentTokenCount: usage.cacheReadTokens } : {}),
      },
    }),
  );
  return events;
}

function signature(part: ToolCallPart): GooglePart {
  return part.thoughtSignature !== undefined ? { thoughtSignature: part.thoughtSignature } : {};
}

function callHead(part: ToolCallPart): Record<string, unknown> {
  return { ...(part.id !== undefined ? { id: part.id } : {}), name: part.name };
}

/** Gemini sends arguments as a JSON object; a string that is not JSON is passed through verbatim. */
function completeCall(part: ToolCallPart): GooglePart {
  let args: unknown = part.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      args = toolArgumentsJson(part);
    }
  }
  return { functionCall: { ...callHead(part), args }, ...signature(part) };
}

function streamedCall(part: ToolCallPart, where: string): GooglePart[][] {
  let args: unknown = part.arguments;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch (cause) {
      throw new ScriptError(`${where}: arguments must be valid JSON to be streamed in pieces`, { cause });
    }
  }
  const parts: GooglePart[][] = [
    [{ functionCall: { ...callHead(part), willContinue: true }, ...signature(part) }],
  ];
  for (const partialArgs of flattenToPartialArgs(args, part.chunkSize, where)) {
    parts.push([{ functionCall: { partialArgs: [partialArgs], willContinue: true } }]);
  }
  parts.push([{ functionCall: {} }]);
  return parts;
}
