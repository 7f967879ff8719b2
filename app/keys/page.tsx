import { currentDeployment } from "../deployment";
import { BuyPack } from "../purchase/buy-pack";
import { KeyLookup } from "./key-lookup";

export const dynamic = "force-dynamic";

export default async function KeysPage() {
  const { server, config, facts } = await currentDeployment();
  return (
    <>
      <h1>Prepaid key</h1>
      <p className="lead">
        Check a prepaid key&apos;s budget. The key is sent only in the Authorization header of one request to the status
        endpoint; it is not stored in this browser.
      </p>
      <section className="card">
        <KeyLookup statusUrl={`${facts.prepaidApiBase}/prepaid/status`} />
      </section>
      <section className="card" aria-labelledby="buy-key">
        <h2 id="buy-key">Buy a new key</h2>
        <BuyPack terms={server.walletPurchaseTerms(config)} />
      </section>
    </>
  );
}
