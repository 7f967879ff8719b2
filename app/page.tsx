import { CopyButton } from "./copy-button";
import { currentDeployment } from "./deployment";
import { BuyPack } from "./purchase/buy-pack";

export const dynamic = "force-dynamic";

const count = (value: number) => value.toLocaleString("en-US");

export default async function PricesPage() {
  const { server, config, facts } = await currentDeployment();
  const sheet = server.priceSheet(config.catalog, config.network, config.payTo);
  const curl = server.curlExampleCode(facts);
  const typescript = server.clientExampleCode(facts);
  const purchase = server.walletPurchaseTerms(config);
  return (
    <>
      <h1>Prices</h1>
      <p className="lead">
        Pay per request in USDC with x402: no account, no API key. Every paid request first answers 402 with its exact
        price; sign it and repeat the request.
      </p>

      <section className="card" aria-labelledby="deployment">
        <h2 id="deployment">This deployment</h2>
        <dl className="facts">
          <dt>Network</dt>
          <dd data-testid="network">{sheet.network.id}</dd>
          <dt>Asset (USDC)</dt>
          <dd data-testid="asset">{sheet.network.asset}</dd>
          <dt>Pay-to</dt>
          <dd data-testid="pay-to">{sheet.network.payTo}</dd>
          <dt>Per request</dt>
          <dd>
            + {sheet.overheadUsd} USD settlement overhead{sheet.liveGas ? " + live settlement gas" : ""}; at least{" "}
            {sheet.minimumChargeUsd} USD
          </dd>
        </dl>
      </section>

      <section className="card" aria-labelledby="chat-models">
        <h2 id="chat-models">Language models (chat completions, responses)</h2>
        <div className="table-scroll">
          <table data-testid="chat-prices">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Input, USD / 1M tokens
                </th>
                <th scope="col" className="num">
                  Output, USD / 1M tokens
                </th>
                <th scope="col" className="num">
                  Context
                </th>
                <th scope="col" className="num">
                  Max output
                </th>
              </tr>
            </thead>
            <tbody>
              {sheet.chat.map((model) => (
                <tr key={model.id}>
                  <th scope="row">{model.id}</th>
                  <td className="num">{model.input}</td>
                  <td className="num">{model.output}</td>
                  <td className="num">{count(model.context)}</td>
                  <td className="num">{count(model.maxOutput)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="note">
          Price = input tokens x input rate + max_tokens (default {count(sheet.defaultMaxTokens)}) x output rate +{" "}
          {sheet.overheadUsd} USD, rounded up to whole USDC units.
        </p>
      </section>

      <section className="card" aria-labelledby="image-models">
        <h2 id="image-models">Images (generation, image to image)</h2>
        <div className="table-scroll">
          <table data-testid="image-prices">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Size</th>
                <th scope="col" className="num">
                  USD per image
                </th>
              </tr>
            </thead>
            <tbody>
              {sheet.images.map((model) => (
                <tr key={model.id}>
                  <th scope="row">{model.id}</th>
                  <td>{model.size}</td>
                  <td className="num">{model.perImage}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="note">Price = price per image x n (1 to 4) + {sheet.overheadUsd} USD per request.</p>
      </section>

      <section className="card" aria-labelledby="decision-model">
        <h2 id="decision-model">Structured decisions</h2>
        <p data-testid="decision-price">
          <strong>{sheet.decision.id}</strong>: {sheet.decision.input} USD per 1M input tokens; output free; +{" "}
          {sheet.overheadUsd} USD per request.
        </p>
      </section>

      <section className="card" aria-labelledby="packs">
        <h2 id="packs">Prepaid packs</h2>
        <div className="table-scroll">
          <table data-testid="pack-prices">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  100,000 tokens, USD
                </th>
                <th scope="col" className="num">
                  1,000,000 tokens, USD
                </th>
              </tr>
            </thead>
            <tbody>
              {sheet.packs.map((pack) => (
                <tr key={pack.model}>
                  <th scope="row">{pack.model}</th>
                  <td className="num">{pack.small.usd}</td>
                  <td className="num">{pack.large.usd}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="note">
          Tokens at the model&apos;s input rate plus the {sheet.overheadUsd} USD settlement fee. Any amount from 100,000
          to 1,000,000 tokens in steps of 100,000.
        </p>
        <h3 id="buy-pack" className="subhead">
          Buy a pack
        </h3>
        <BuyPack terms={purchase} />
      </section>

      <section className="card" aria-labelledby="free">
        <h2 id="free">Free</h2>
        <ul>
          <li>
            Chat with <strong>{sheet.free.chatModel}</strong>:{" "}
            {sheet.free.windows
              .map((window) => `${window.limit} requests per ${window.name === "perDay" ? "day" : "10 minutes"}`)
              .join(" and ")}{" "}
            per caller, max_tokens up to {count(sheet.free.maxTokens)}.
          </li>
          <li>
            Embeddings with <strong>{sheet.free.embeddingModel}</strong>: 1 to {sheet.free.maxInputs} inputs per
            request.
          </li>
        </ul>
      </section>

      <section className="card" aria-labelledby="first-call">
        <h2 id="first-call">First call</h2>
        <div className="code-head">
          <h3>curl: see the price</h3>
          <CopyButton text={curl} label="curl example" />
        </div>
        <pre>
          <code>{curl}</code>
        </pre>
        <div className="code-head">
          <h3>TypeScript: openai SDK paying with @x402/fetch</h3>
          <CopyButton text={typescript} label="TypeScript example" />
        </div>
        <pre>
          <code>{typescript}</code>
        </pre>
      </section>
    </>
  );
}
