import { describe, expect, it } from "vitest";
import { encodePng } from "../../cli/dev-stack/png";
import { ImageRefused, imageSource } from "./image-source";

const png = encodePng(1024, 768, () => [10, 20, 30]);
const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString("base64")}`;
const MB = 1024 * 1024;

const refusal = (url: string, maxBytes = 20 * MB) => {
  try {
    imageSource(url, maxBytes);
  } catch (error) {
    if (error instanceof ImageRefused) return error.message;
    throw error;
  }
  return undefined;
};

describe("an image part's source", () => {
  it("reads a data URL's dimensions from the image's header", () => {
    expect(imageSource(dataUrl("image/png", png), 20 * MB)).toEqual({ kind: "data", width: 1024, height: 768 });
  });

  it("refuses a data URL of another type, a mismatched type, junk, or one over the model's size", () => {
    expect(refusal(dataUrl("image/svg+xml", Buffer.from("<svg/>")))).toMatch(/image\/png, image\/jpeg/);
    expect(refusal(dataUrl("image/jpeg", png))).toMatch(/says image\/jpeg but the image is png/);
    expect(refusal(dataUrl("image/png", Buffer.from("not an image at all, just text")))).toMatch(/not a PNG/);
    expect(refusal("data:image/png;base64,@@@")).toMatch(/not valid base64/);
    expect(refusal("data:image/png;base64,@@@@")).toMatch(/not a PNG/);
    expect(refusal(dataUrl("image/png", png), 100)).toMatch(/at most 100 bytes/);
    expect(refusal("data:image/png,rawbytes")).toMatch(/base64/);
  });

  it("takes an https URL of a public host without fetching it", () => {
    expect(imageSource("https://images.example.invalid/cat.png", MB)).toEqual({ kind: "url" });
    expect(imageSource("https://8.8.8.8/cat.png", MB)).toEqual({ kind: "url" });
    expect(imageSource("https://[2606:4700::1]/cat.png", MB)).toEqual({ kind: "url" });
  });

  it("refuses loopback, private, link-local, metadata and local names, http, and other schemes", () => {
    for (const url of [
      "https://127.0.0.1/x.png",
      "https://10.0.0.1/x.png",
      "https://192.168.1.1/x.png",
      "https://169.254.169.254/latest/meta-data/",
      "https://[::1]/x.png",
      "https://[::ffff:127.0.0.1]/x.png",
      "https://[fd00::1]/x.png",
      "https://2130706433/x.png",
      "https://0x7f.1/x.png",
      "https://0.0.0.0/x.png",
      "https://localhost/x.png",
      "https://LOCALHOST./x.png",
      "https://metadata.google.internal/x.png",
      "https://printer.local/x.png",
      "https://intranet/x.png",
      "https://user:secret@images.example.com/x.png",
      "http://images.example.com/x.png",
      "file:///etc/passwd",
      "ftp://images.example.com/x.png",
      "not a url",
    ]) {
      expect(refusal(url), url).toBeDefined();
    }
  });
});
