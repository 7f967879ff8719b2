import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");

/** The docs a reader walks: the README, the front door, and one page per subject under docs/. */
const DOCS = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((entry) => entry.endsWith(".md"))
    .map((entry) => `docs/${entry}`),
];

/** What a link's target is to the check: a file's text (to look its anchors up in), a directory, or nothing. */
type Target = { kind: "file"; text: string } | { kind: "directory" } | undefined;

/** The lines of `text` outside fenced code blocks (those inside become empty, so line numbers stay). */
function outsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && opening) {
      fence = opening;
      return "";
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence)) fence = undefined;
      return "";
    }
    return line;
  });
}

/** The prose of `text`: no fenced code, no code spans, no HTML comments. */
function prose(text: string): string {
  return outsideFences(text)
    .join("\n")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/`[^`]*`/g, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a Markdown file has, as GitHub numbers repeated headings (`-1`, `-2`, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of outsideFences(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The targets of the inline links and images of a Markdown text, outside code. */
function linkTargets(text: string): string[] {
  return [...prose(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
}

/**
 * The links of `file` (a path from the root) that do not resolve: a relative path to nothing, or an anchor that is
 * no heading of its target. Links with a scheme (https:, mailto:) are left to the reader.
 */
function brokenLinks(file: string, text: string, target: (path: string) => Target): string[] {
  const broken: string[] = [];
  for (const link of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith("//")) continue;
    const [pathPart = "", anchor] = link.split("#", 2);
    const path = pathPart === "" ? file : normalize(join(dirname(file), decodeURIComponent(pathPart)));
    const found = path === file ? ({ kind: "file", text } as const) : target(path);
    if (found === undefined || path.startsWith("..")) broken.push(`${file}: ${link} (no such file)`);
    else if (anchor !== undefined && (found.kind !== "file" || !anchors(found.text).has(anchor)))
      broken.push(`${file}: ${link} (no such anchor)`);
  }
  return broken;
}

/** The repository's files, as the links see them. */
function onDisk(path: string): Target {
  const absolute = join(root, path);
  if (!existsSync(absolute)) return undefined;
  try {
    return { kind: "file", text: readFileSync(absolute, "utf8") };
  } catch {
    return { kind: "directory" };
  }
}

/** The contents of the fenced code blocks of a Markdown text, in order. */
function fencedBlocks(text: string): string[] {
  return [...text.matchAll(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\1\s*$/gm)].map((match) => match[2]!.trim());
}

describe("the docs' links", () => {
  it("walks the README and every page of docs/", () => {
    expect(DOCS.length).toBeGreaterThan(8);
  });

  it.each(DOCS)("%s: every relative link and anchor resolves", (file) => {
    expect(brokenLinks(file, readFileSync(join(root, file), "utf8"), onDisk)).toEqual([]);
  });

  it("the README links every page of docs/", () => {
    const linked = new Set(
      linkTargets(readFileSync(join(root, "README.md"), "utf8")).map((link) => link.split("#")[0]),
    );
    expect(DOCS.filter((file) => file !== "README.md" && !linked.has(file))).toEqual([]);
  });

  it("finds a broken link, a broken anchor and a link out of the repository, but not a link inside code", () => {
    const pages: Record<string, string> = {
      "docs/a.md": "# A page\n\n## Deploys: SIGTERM drains (`paysvc start`)\n\n## Same\n\n## Same\n",
    };
    const target = (path: string): Target =>
      pages[path] !== undefined
        ? { kind: "file", text: pages[path] }
        : path === "docs"
          ? { kind: "directory" }
          : undefined;
    const text = [
      "See [a](a.md), [drains](a.md#deploys-sigterm-drains-paysvc-start), [twice](a.md#same-1), [here](#top) and",
      "[the folder](../docs). Broken: [gone](gone.md), [no anchor](a.md#nowhere), [up](../../x.md#y) and",
      "[a third same](a.md#same-2); [web](https://example.com) is not checked, nor `[code](nothing.md)`.",
      "",
      "```md",
      "[fenced](nothing.md)",
      "```",
      "",
      "# Top",
    ].join("\n");
    expect(brokenLinks("docs/b.md", text, target)).toEqual([
      "docs/b.md: gone.md (no such file)",
      "docs/b.md: a.md#nowhere (no such anchor)",
      "docs/b.md: ../../x.md#y (no such file)",
      "docs/b.md: a.md#same-2 (no such anchor)",
    ]);
  });

  it("makes GitHub's anchors", () => {
    expect(slug("Many calls, one deposit: channels (`batch-settlement`)")).toBe(
      "many-calls-one-deposit-channels-batch-settlement",
    );
    expect(slug("The `paysvc` CLI")).toBe("the-paysvc-cli");
    expect(slug("Decisions (`POST /jev`)")).toBe("decisions-post-jev");
  });
});

describe("the README's two commands", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const [first, second] = fencedBlocks(readme);

  it("are its first commands: start on the embedded defaults, then every test", () => {
    expect(first).toBe("npm install && npm start");
    expect(second).toBe("npm install && npm test");
  });

  it("the second is what CI runs, verbatim", () => {
    const ci = readFileSync(join(root, ".ci/run"), "utf8").split("\n");
    expect(ci).toContain(second);
    // The last command CI runs is the README's.
    expect(ci.filter((line) => line.trim() !== "" && !line.startsWith("#")).at(-1)).toBe(second);
  });

  it("run package scripts that exist", () => {
    const { scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(["start", "test"]));
  });
});

describe("the docs' tables", () => {
  it.each(DOCS)("%s: no table is wider than 120 characters (prettier's width)", (file) => {
    const wide = outsideFences(readFileSync(join(root, file), "utf8")).filter(
      (line) => line.startsWith("|") && line.length > 120,
    );
    expect(wide).toEqual([]);
  });
});
