import type { ReactNode } from "react";

export const metadata = {
  title: "paysvc: pay-per-request model gateway",
  description: "OpenAI-compatible language models paid per request with x402 USDC payments. No account, no API key.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body
        style={{
          fontFamily: "system-ui, sans-serif",
          margin: "0 auto",
          maxWidth: 760,
          padding: "2rem 1rem",
          lineHeight: 1.5,
        }}
      >
        {children}
      </body>
    </html>
  );
}
