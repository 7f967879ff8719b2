import { currentDeployment } from "../deployment";
import { KeyLookup } from "./key-lookup";

export const dynamic = "force-dynamic";

export default async function KeysPage() {
  const { facts } = await currentDeployment();
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
    </>
  );
}
