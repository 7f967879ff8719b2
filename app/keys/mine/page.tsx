import { currentDeployment } from "../../deployment";
import { MyKeys } from "../my-keys";

export const dynamic = "force-dynamic";

export default async function MyKeysPage() {
  const { server, config } = await currentDeployment();
  const terms = server.walletPurchaseTerms(config);
  return (
    <>
      <h1>My keys</h1>
      <p className="lead">
        The prepaid keys your wallet paid for. Sign in once with that wallet (a signature, no payment, no gas) to see
        them, add tokens to one (paid with the same wallet, as a purchase is), give one a new code if it leaked or was
        lost (its tokens and limits stay), or revoke one. Codes are never shown again: a new one is shown once, when you
        rotate.
      </p>
      <section className="card">
        <MyKeys terms={terms} />
      </section>
    </>
  );
}
