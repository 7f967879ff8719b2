import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Compression would buffer server-sent events; a reverse proxy can compress non-streaming responses.
  compress: false,
  poweredByHeader: false,
  serverExternalPackages: ["better-sqlite3"],
  // app/serve.mjs answers the API itself with its own copy of server/; the framework's copy (the console's pages)
  // is loaded when a page is first visited, not at start, which keeps it out of memory until then.
  experimental: { preloadEntriesOnStart: false },
  // The test command runs tsc and eslint itself, once, over the whole repository.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
