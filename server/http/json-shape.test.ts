import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { checkJsonShape, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_JSON_VALUES } from "./json-shape";

/** What the check says of `text`: "accepted", or the refusal's message and parameter. */
async function shapeOf(text: string) {
  try {
    await checkJsonShape(text);
    return "accepted";
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, message: error.message, param: error.options.param ?? null };
  }
}

const items = (count: number, item = "1") => `[${Array.from({ length: count }, () => item).join(",")}]`;
const members = (count: number) => `{${Array.from({ length: count }, (_, index) => `"k${index}":1`).join(",")}}`;

describe("a request body's shape, checked before it is parsed", () => {
  it("refuses arrays and objects nested deeper than the limit, counted as JSON.parse's value nests", async () => {
    const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;
    for (const nested of [arrays, objects]) {
      expect(await shapeOf(nested(MAX_JSON_DEPTH))).toBe("accepted");
      expect(await shapeOf(nested(MAX_JSON_DEPTH + 1))).toEqual({
        status: 400,
        message: `Request body is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep`,
        param: null,
      });
    }
    expect(await shapeOf(arrays(100_000))).toMatchObject({ status: 400 });
    // Brackets inside strings, escaped quotes included, are text.
    const text = JSON.stringify({ a: "[".repeat(500), b: '\\"{{{{'.repeat(200), c: [["]]]"]] });
    expect(await shapeOf(text)).toBe("accepted");
    // A string longer than the scan's slices, escapes across every cut, is skipped whole: what follows it counts.
    const long = '\\"[{\\\\'.repeat(150_000);
    expect(await shapeOf(JSON.stringify({ a: long, b: [1, 2] }))).toBe("accepted");
    expect(await shapeOf(`{"a":${JSON.stringify(long)},"b":${items(MAX_JSON_MEMBERS + 1)}}`)).toMatchObject({
      param: "b",
    });
  });

  it("refuses an array or object of more members than the limit, named as the schema's errors name fields", async () => {
    expect(MAX_JSON_MEMBERS).toBe(16_384);
    expect(await shapeOf(`{"messages":${items(MAX_JSON_MEMBERS)}}`)).toBe("accepted");
    expect(await shapeOf(`{"model":"m","messages":${items(MAX_JSON_MEMBERS + 1)}}`)).toEqual({
      status: 400,
      message: `Invalid 'messages': an array in a request body may have at most ${MAX_JSON_MEMBERS} members`,
      param: "messages",
    });
    // The member being read when the bound passed: input[2], inside an object's field.
    const deep = `{"model":"m","input":[[1],"a",{"tokens":[1,2],"meta":${members(MAX_JSON_MEMBERS + 1)}}]}`;
    expect(await shapeOf(deep)).toEqual({
      status: 400,
      message: `Invalid 'input[2].meta': an object in a request body may have at most ${MAX_JSON_MEMBERS} members`,
      param: "input[2].meta",
    });
    // The body itself.
    expect(await shapeOf(items(MAX_JSON_MEMBERS + 1))).toMatchObject({ param: null, message: /^Invalid 'body'/ });
    // Commas in strings, and whitespace anywhere, count for nothing.
    const spaced = `[ ${Array.from({ length: MAX_JSON_MEMBERS }, () => ' "a,b,c" ').join(" , ")} ]`;
    expect(await shapeOf(spaced)).toBe("accepted");
  });

  it("refuses a body of more values than the limit, however they are spread", async () => {
    const perArray = MAX_JSON_MEMBERS - 1;
    // Arrays of numbers, each within the members' bound: each array is a value too.
    const arrays = Math.ceil(MAX_JSON_VALUES / (perArray + 1));
    const row = items(perArray);
    const over = `[${Array.from({ length: arrays + 1 }, () => row).join(",")}]`;
    expect(await shapeOf(over)).toEqual({
      status: 400,
      message: `Request body holds too many values: at most ${MAX_JSON_VALUES} strings, numbers, arrays and objects in all`,
      param: null,
    });
    const under = `[${Array.from({ length: arrays - 2 }, () => row).join(",")}]`;
    expect(await shapeOf(under)).toBe("accepted");
  });

  it("refuses a 24 MB array of ten million junk elements having read only the first of them", async () => {
    const junk = `{"model":"vendor-a/gpt-6-luna","messages":[${"1,".repeat(12_000_000)}1]}`;
    expect(await shapeOf(junk)).toMatchObject({ status: 400, param: "messages" });
  });

  it("leaves malformed text to JSON.parse to name: it only counts", async () => {
    for (const text of ['{"a":', "[1,,2]", "}}]]", '{"a" 1}', "nul", '"open']) {
      expect(await shapeOf(text), text).toBe("accepted");
    }
  });
});
