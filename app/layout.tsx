import type { ReactNode } from "react";
import "./globals.css";
import { SiteNav } from "./site-nav";

export const metadata = {
  title: "paysvc: pay-per-request model gateway",
  description: "OpenAI-compatible language models paid per request with x402 USDC payments. No account, no API key.",
};

export const viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <a className="skip" href="#content">
          Skip to content
        </a>
        <header className="site">
          <div className="inner">
            <a className="brand" href="/">
              paysvc
            </a>
            <SiteNav />
          </div>
        </header>
        <main id="content">{children}</main>
        <footer className="site">
          Machine-readable: <a href="/openapi.json">OpenAPI</a> · <a href="/llms.txt">llms.txt</a> ·{" "}
          <a href="/AI-AGENTS.md">AI-AGENTS.md</a> · <a href="/.well-known/x402">/.well-known/x402</a> ·{" "}
          <a href="/health">health</a>
        </footer>
      </body>
    </html>
  );
}
