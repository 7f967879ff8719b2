import { QuotaView } from "./quota-view";

export const dynamic = "force-dynamic";

export default function QuotaPage() {
  return (
    <>
      <h1>Free quota</h1>
      <p className="lead">Your use of the free chat (vendor-b/gpt-oss-20b), counted per address.</p>
      <section className="card">
        <QuotaView />
      </section>
    </>
  );
}
