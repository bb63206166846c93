import type { SseEvent, Wire } from "../types.js";
import { renderAnthropic } from "./anthropic.js";
import { renderGoogle } from "./google.js";
import { renderOpenAIChat } from "./openai-chat.js";
import { renderOpenAIResponses } from "./openai-responses.js";
import type { PartsResponse, RenderContext } from "./render-context.js";

/** Renders a scripted turn as the events of the given wire. */
export function renderScript(wire: Wire, response: PartsResponse, ctx: RenderContext): SseEvent[] {
  switch (wire) {
    case "anthropic":
      return renderAnthropic(response, ctx);
    case "openai-chat":
      return renderOpenAIChat(response, ctx);
    case "openai-responses":
      return renderOpenAIResponses(response, ctx);
    case "google":
      return renderGoogle(response, ctx);
  }
}
