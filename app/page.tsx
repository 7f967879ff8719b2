export const dynamic = "force-dynamic";

export default function HomePage() {
  return (
    <main>
      <h1>paysvc</h1>
      <p>
        OpenAI-compatible chat completions paid per request with x402: call a paid endpoint, receive HTTP 402 with the
        exact price, sign a USDC transfer, repeat the request with the signature.
      </p>
      <ul>
        <li>
          <a href="/v1/models">/v1/models</a>: models and live prices
        </li>
        <li>
          <a href="/health">/health</a>: service status
        </li>
        <li>
          <code>POST /v1/chat/completions</code>: paid chat completions (streaming supported)
        </li>
      </ul>
    </main>
  );
}
