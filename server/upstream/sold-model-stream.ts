import { eachEvent, type EventStream } from "../http/event-stream";

/**
 * An event stream whose chunks name the provider's model (its id for the route, or a dated version of
 * it): each chunk's own "model" is set to the sold id, so the caller always sees the id it bought. A chunk that
 * already names it, or names no model, passes as it came; a "model" inside a string (a tool call's arguments, the
 * text) is text, never the chunk's own.
 */
export function withSoldModelId(source: EventStream, soldId: string): EventStream {
  const named = `"model":${JSON.stringify(soldId)}`;
  return eachEvent(source, (event) => {
    const { data } = event;
    if (data === undefined || !data.includes('"model"') || data.includes(named)) return event;
    const json = event.json();
    if (json !== undefined && typeof json.model === "string" && json.model !== soldId) {
      json.model = soldId;
      event.changed();
    }
    return event;
  });
}
