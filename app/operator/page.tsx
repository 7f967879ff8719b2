import { Fragment } from "react";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import type { KeysQuery, OperatorKeys, OperatorView } from "../../server/index";

type RunView = NonNullable<OperatorView["reconciliation"]["last"]>;
import { countIn, OPEN_STATUSES } from "../../server/ledger-report/ledger-report";
import { serverModule } from "../server-module";
import { RevenueChart } from "./revenue-chart";
import "./operator.css";

export const dynamic = "force-dynamic";

export const metadata = { title: "Operator · paysvc", robots: { index: false, follow: false } };

const STATUS_COLUMNS = [
  ["settled", "Settled"],
  ["not_charged", "Not charged"],
  ["failed", "Failed"],
  ["unsettled", "Unsettled"],
  ["unpaid", "Unpaid"],
] as const;
const ATTENTION = [
  ["unsettled", "Unsettled", "expired unused: never paid"],
  ["settle_unknown", "settle_unknown", "settlement outcome unknown: reconciliation decides"],
  ["unpaid", "Unpaid", "delivered, settlement refused: what was delivered"],
] as const;

/**
 * The operator's page: the ledger's figures (the queries of `paysvc ledger report`), the providers and
 * facilitators, the last reconciliation. Only with OPERATOR_TOKEN set (else 404), behind a sign-in with it.
 */
export default async function OperatorPage({ searchParams }: { searchParams: Promise<Record<string, unknown>> }) {
  const server = await serverModule();
  const params = await searchParams;
  const text = (name: string) => (typeof params[name] === "string" ? (params[name] as string) : undefined);
  const query: KeysQuery = { key: text("key"), owner: text("owner"), prefix: text("prefix"), revoked: text("revoked") };
  const page = await server.operatorPage((await headers()).get("cookie"), query);
  if (page.state === "absent") notFound();
  if (page.state === "signed-out") return <SignIn />;
  return <Dashboard view={page.view} keys={page.keys} />;
}

function SignIn() {
  return (
    <>
      <h1>Operator</h1>
      <p className="lead">Sign in with the deployment&apos;s operator token (OPERATOR_TOKEN).</p>
      <section className="card">
        <form className="lookup" method="post" action="/operator/session">
          <div className="field">
            <label htmlFor="operator-token">Operator token</label>
            <input id="operator-token" type="password" name="token" autoComplete="current-password" required />
          </div>
          <button type="submit">Sign in</button>
        </form>
        <p className="note">The session lasts 8 hours, in a cookie this site&apos;s scripts cannot read.</p>
      </section>
    </>
  );
}

function Dashboard({ view, keys }: { view: OperatorView; keys: OperatorKeys }) {
  const { report } = view;
  const { prepaid, total } = report;
  const opened = countIn(total, OPEN_STATUSES);
  return (
    <div className="operator">
      <div className="operator-head">
        <div>
          <h1>Operator</h1>
          <p className="lead">
            {view.networkName} ({view.network}), {view.database}; read {view.generatedAt.slice(0, 19).replace("T", " ")}{" "}
            UTC. Figures since <span data-testid="since">{report.since}</span>, as{" "}
            <code>paysvc ledger report --since {report.since}</code> prints them.
          </p>
        </div>
        <form method="post" action="/operator/sign-out">
          <button type="submit" className="secondary">
            Sign out
          </button>
        </form>
      </div>

      <section className="tiles" aria-label="Last 30 days">
        <Tile label="Revenue settled" value={total.revenueUsd} unit="USD" atomic={total.revenueAtomic} id="revenue" />
        <Tile label="Payments settled" value={String(total.requests.settled ?? 0)} id="settled-calls" />
        <Tile label="Prepaid keys sold" value={String(prepaid.keysSold)} id="keys-sold" />
        <Tile
          label="Tokens outstanding"
          value={prepaid.tokensOutstanding.toLocaleString("en-US")}
          id="tokens-outstanding"
        />
        <Tile
          label="Needing a look"
          value={String(view.attention.total)}
          id="attention-count"
          warn={view.attention.total > 0}
        />
      </section>

      <section className="card">
        <h2>Revenue settled</h2>
        <RevenueChart id="hourly" title="Last 48 hours, by hour" series={view.hourly} label={hourLabel} />
        <RevenueChart id="daily" title="Last 30 days, by day" series={view.daily} label={dayLabel} />
      </section>

      <section className="card">
        <h2>Calls and revenue per endpoint and model</h2>
        <div className="table-scroll">
          <table data-testid="endpoints">
            <thead>
              <tr>
                <th>Endpoint</th>
                <th>Model</th>
                {STATUS_COLUMNS.map(([, label]) => (
                  <th key={label} className="num">
                    {label}
                  </th>
                ))}
                <th className="num">Open</th>
                <th className="num">Revenue USD</th>
                <th className="num">Unpaid USD</th>
              </tr>
            </thead>
            <tbody>
              {view.endpoints.length === 0 ? (
                <tr>
                  <td colSpan={10}>No payments in these 30 days.</td>
                </tr>
              ) : null}
              {view.endpoints.map((line) => (
                <tr key={`${line.endpoint} ${line.model}`} data-endpoint={line.endpoint} data-model={line.model}>
                  <th scope="row">{line.endpoint}</th>
                  <td>{line.model}</td>
                  {STATUS_COLUMNS.map(([status]) => (
                    <td key={status} className="num" data-status={status}>
                      {line.requests[status] ?? 0}
                    </td>
                  ))}
                  <td className="num" data-status="open">
                    {countIn(line, OPEN_STATUSES)}
                  </td>
                  <td className="num" data-figure="revenue" data-atomic={line.revenueAtomic.toString()}>
                    {line.revenueUsd}
                  </td>
                  <td className="num" data-figure="unpaid" data-atomic={line.unpaidAtomic.toString()}>
                    {line.unpaidUsd}
                  </td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr data-endpoint="TOTAL">
                <th scope="row">Total</th>
                <td />
                {STATUS_COLUMNS.map(([status]) => (
                  <td key={status} className="num" data-status={status}>
                    {total.requests[status] ?? 0}
                  </td>
                ))}
                <td className="num" data-status="open">
                  {opened}
                </td>
                <td className="num" data-figure="revenue" data-atomic={total.revenueAtomic.toString()}>
                  {total.revenueUsd}
                </td>
                <td className="num" data-figure="unpaid" data-atomic={total.unpaidAtomic.toString()}>
                  {view.unpaidUsd}
                </td>
              </tr>
            </tfoot>
          </table>
        </div>
      </section>

      <section className="card">
        <h2>Needing a look</h2>
        <div className="table-scroll">
          <table data-testid="attention">
            <thead>
              <tr>
                <th>Status</th>
                <th className="num">Rows</th>
                <th className="num">Amount USD</th>
                <th>What it means</th>
              </tr>
            </thead>
            <tbody>
              {ATTENTION.map(([status, label, meaning]) => (
                <tr key={status} data-status={status}>
                  <th scope="row">{label}</th>
                  <td className="num" data-figure="count">
                    {view.attention.figures[status].count}
                  </td>
                  <td
                    className="num"
                    data-figure="amount"
                    data-atomic={view.attention.figures[status].amountAtomic.toString()}
                  >
                    {view.attention.figures[status].amountUsd}
                  </td>
                  <td className="hint">{meaning}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {view.attention.rows.length > 0 ? (
          <div className="table-scroll">
            <table data-testid="attention-rows" className="rows">
              <thead>
                <tr>
                  <th>Row</th>
                  <th>When (UTC)</th>
                  <th>Status</th>
                  <th>Endpoint</th>
                  <th>Model</th>
                  <th>Payer</th>
                  <th className="num">Amount USD</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                {view.attention.rows.map((row) => (
                  <tr key={row.id} data-row={row.id} data-status={row.status}>
                    <td>{row.id}</td>
                    <td>{row.createdAt.slice(0, 19).replace("T", " ")}</td>
                    <td>{row.status}</td>
                    <td>{row.endpoint}</td>
                    <td>{row.model}</td>
                    <td className="mono" title={row.payer}>
                      {`${row.payer.slice(0, 8)}…${row.payer.slice(-6)}`}
                    </td>
                    <td className="num" data-atomic={row.amountAtomic.toString()}>
                      {row.amountUsd}
                    </td>
                    <td className="reason">{row.reason ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {view.attention.total > view.attention.rows.length ? (
          <p className="note">
            The newest {view.attention.rows.length} of {view.attention.total} rows;{" "}
            <code>paysvc ledger reconcile --check</code> lists the open ones.
          </p>
        ) : null}
      </section>

      <section className="card">
        <h2>Prepaid keys</h2>
        <dl className="facts" data-testid="prepaid">
          <dt>Keys sold in these 30 days</dt>
          <dd data-figure="keys-sold">{prepaid.keysSold}</dd>
          <dt>Tokens sold with them</dt>
          <dd data-figure="tokens-sold">{prepaid.tokensSold.toLocaleString("en-US")}</dd>
          <dt>Active keys (any age)</dt>
          <dd data-figure="active-keys">{prepaid.activeKeys}</dd>
          <dt>Tokens outstanding on them</dt>
          <dd data-figure="tokens-outstanding">{prepaid.tokensOutstanding.toLocaleString("en-US")}</dd>
        </dl>
      </section>

      <KeysCard keys={keys} />

      <section className="card">
        <h2>Payments by protocol</h2>
        <dl className="facts" data-testid="protocols">
          {Object.entries(report.methods).map(([method, figures]) => (
            <Fragment key={method}>
              <dt>{method === "mpp" ? "MPP" : method} payments in these 30 days</dt>
              <dd data-figure={`${method}-payments`}>
                {figures.count}, {figures.amountUsd} USD settled
              </dd>
            </Fragment>
          ))}
        </dl>
      </section>

      {view.channelPayout ? <ChannelPayout payout={view.channelPayout} /> : null}

      <section className="card">
        <h2>Busiest keys and wallets</h2>
        {view.busiest.length === 0 ? (
          <p className="note">No rate-limited call in this hour or the one before.</p>
        ) : (
          <div className="table-scroll">
            <table data-testid="busiest">
              <thead>
                <tr>
                  <th>Payer</th>
                  <th className="num">Calls this hour</th>
                  <th className="num">Refused (429)</th>
                  <th className="num">Calls the hour before</th>
                  <th className="num">Refused</th>
                </tr>
              </thead>
              <tbody>
                {view.busiest.map((payer) => (
                  <tr key={`${payer.kind}:${payer.who}:${payer.model ?? ""}`}>
                    <td className="mono" title={payer.who}>
                      {payer.kind === "key" ? `key #${payer.who}` : `${payer.who.slice(0, 8)}…${payer.who.slice(-6)}`}
                      {payer.model ? ` (${payer.model})` : ""}
                    </td>
                    <td className="num">{payer.calls}</td>
                    <td className="num" data-figure="refusals">
                      {payer.refusals}
                    </td>
                    <td className="num">{payer.previousCalls}</td>
                    <td className="num">{payer.previousRefusals}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p className="note">
          Paid calls counted against each payer&apos;s rate limits (UTC clock hours); refusals are answered 429.
        </p>
      </section>

      <section className="card">
        <h2>Providers and facilitators</h2>
        <Components title="Providers" testId="providers" components={view.providers} />
        <Components title="Facilitators" testId="facilitators" components={view.facilitators} />
        <p className="note">Probed now, as /health probes them; a breaker opens after failures in a row.</p>
      </section>

      <section className="card">
        <h2>Last reconciliation</h2>
        <Reconciliation view={view} />
      </section>
    </div>
  );
}

function Tile(props: { id: string; label: string; value: string; unit?: string; atomic?: bigint; warn?: boolean }) {
  return (
    <div className={props.warn ? "tile warn" : "tile"} data-testid={`tile-${props.id}`}>
      <span className="tile-label">{props.label}</span>
      <span className="tile-value" data-atomic={props.atomic?.toString()}>
        {props.value}
        {props.unit ? <span className="tile-unit"> {props.unit}</span> : null}
      </span>
    </div>
  );
}

/** The pay-to's account in the channel contract: a claim moves money there, only a payout moves it to the pay-to. */
function ChannelPayout({ payout }: { payout: NonNullable<OperatorView["channelPayout"]> }) {
  return (
    <section className="card" data-testid="channel-payout">
      <h2>Channel payouts</h2>
      {payout.error !== undefined ? (
        <p className="error">{payout.error}</p>
      ) : (
        <>
          <dl className="facts">
            <dt>Claimed from the channels</dt>
            <dd data-figure="claimed" data-atomic={payout.claimedAtomic.toString()}>
              {payout.claimedUsd} USD
            </dd>
            <dt>Paid out to the pay-to</dt>
            <dd data-figure="paid-out" data-atomic={payout.paidOutAtomic.toString()}>
              {payout.paidOutUsd} USD
            </dd>
            <dt>Claimed, not yet paid out</dt>
            <dd data-figure="awaiting-payout" data-atomic={payout.awaitingPayoutAtomic.toString()}>
              {payout.awaitingPayoutUsd} USD
            </dd>
          </dl>
          <p className="note">
            Read now from the channel contract for {payout.receiver}.{" "}
            {payout.awaitingPayoutAtomic > 0n ? (
              <>
                The pay-to does not have what is not paid out yet: the next claim sends it, or{" "}
                <code>paysvc channels claim</code> now.
              </>
            ) : null}
          </p>
        </>
      )}
    </section>
  );
}

function Components(props: { title: string; testId: string; components: OperatorView["providers"] }) {
  return (
    <div className="table-scroll">
      <table data-testid={props.testId}>
        <thead>
          <tr>
            <th>{props.title}</th>
            <th>Probe</th>
            <th className="num">Latency ms</th>
            <th>Breaker</th>
            <th className="num">Failures in a row</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {props.components.map((component) => (
            <tr key={component.name} data-name={component.name}>
              <th scope="row">{component.name}</th>
              <td>
                <span className={component.status === "up" ? "status good" : "status bad"}>{component.status}</span>
              </td>
              <td className="num">{component.latencyMs.toFixed(1)}</td>
              <td data-figure="breaker">
                <span className={component.breaker === "closed" ? "status good" : "status bad"}>
                  {component.breaker}
                </span>
              </td>
              <td className="num" data-figure="failures">
                {component.consecutiveFailures}
              </td>
              <td className="reason">{component.error ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Reconciliation({ view }: { view: OperatorView }) {
  const { intervalSeconds, last, lastFinding } = view.reconciliation;
  if (intervalSeconds === 0) {
    return (
      <p data-testid="reconciliation">
        Background reconciliation is off (RECONCILE_INTERVAL_SECONDS=0): run <code>paysvc ledger reconcile</code>.
      </p>
    );
  }
  if (!last) {
    return <p data-testid="reconciliation">None yet in this process; it runs every {intervalSeconds} s.</p>;
  }
  return (
    <>
      <Run run={last} testId="reconciliation" every={intervalSeconds} />
      {lastFinding ? <Run run={lastFinding} testId="reconciliation-finding" /> : null}
    </>
  );
}

function Run(props: { run: RunView; testId: string; every?: number }) {
  const { run } = props;
  const when = `${run.finishedAt.slice(0, 19).replace("T", " ")} UTC`;
  const heading = props.every === undefined ? `The last run that found something ended ${when}` : `Ended ${when}`;
  if (run.error !== undefined) {
    return (
      <p data-testid={props.testId} className="error">
        {heading}: it failed: {run.error}
      </p>
    );
  }
  return (
    <div data-testid={props.testId} className="run">
      <p>
        {heading}
        {props.every === undefined ? "" : ` (every ${props.every} s in this process)`}: {rows(run.checked)} not known to
        be final read against the chain
        {run.found.length === 0 && run.awaitingPayoutAtomic === 0n ? "; nothing to do." : "."}
      </p>
      {run.found.length > 0 || run.awaitingPayoutAtomic > 0n ? (
        <table>
          <thead>
            <tr>
              <th>Outcome</th>
              <th className="num">Rows</th>
              <th className="num">Amount USD</th>
            </tr>
          </thead>
          <tbody>
            {run.found.map(({ outcome, count, amountUsd }) => (
              <tr key={outcome} data-outcome={outcome}>
                <th scope="row">{outcome}</th>
                <td className="num">{count}</td>
                <td className="num">{amountUsd}</td>
              </tr>
            ))}
            {run.awaitingPayoutAtomic > 0n ? (
              <tr data-outcome="awaiting-payout">
                <th scope="row">claimed, not paid out</th>
                <td className="num" />
                <td className="num" data-atomic={run.awaitingPayoutAtomic.toString()}>
                  {run.awaitingPayoutUsd}
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

/** Every sixth hour: its hour, or at midnight its date (UTC). */
const hourLabel = (period: string) => {
  const hour = Number(period.slice(11, 13));
  if (hour % 6 !== 0) return undefined;
  return hour === 0 ? period.slice(5, 10) : `${period.slice(11, 13)}h`;
};
/** Every fifth day back from the last. */
const dayLabel = (period: string, index: number, count: number) =>
  (count - 1 - index) % 5 === 0 ? period.slice(5, 10) : undefined;

const rows = (count: number) => `${count} ${count === 1 ? "row" : "rows"}`;

/** The keys sold (by id, owner or code prefix; the newest else), each revocable: what `paysvc keys` does. */
function KeysCard({ keys }: { keys: OperatorKeys }) {
  const { query } = keys;
  return (
    <section className="card" id="keys" aria-labelledby="keys-title">
      <h2 id="keys-title">Keys</h2>
      <form className="lookup" method="get" action="/operator#keys">
        <div className="field">
          <label htmlFor="keys-owner">Owner (wallet)</label>
          <input id="keys-owner" type="text" name="owner" defaultValue={query.owner ?? ""} />
        </div>
        <div className="field">
          <label htmlFor="keys-prefix">Code starts with</label>
          <input id="keys-prefix" type="text" name="prefix" defaultValue={query.prefix ?? ""} />
        </div>
        <button type="submit" className="secondary">
          Find keys
        </button>
      </form>
      {keys.outcome ? (
        <p role="status" data-testid="keys-outcome">
          {keys.outcome}
        </p>
      ) : null}
      {keys.keys.length === 0 ? (
        <p className="note">No key sold matches.</p>
      ) : (
        <div className="table-scroll">
          <table data-testid="keys">
            <thead>
              <tr>
                <th className="num">Id</th>
                <th>Code</th>
                <th>Owner</th>
                <th>Model</th>
                <th>Status</th>
                <th className="num">Used / total</th>
                <th>Last used (UTC)</th>
                <th>
                  <span className="skip">Revoke</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.keys.map((key) => (
                <tr key={key.id} data-testid={`operator-key-${key.id}`}>
                  <td className="num">{key.id}</td>
                  <td className="mono">{key.codePrefix ? `${key.codePrefix}…` : "-"}</td>
                  <td className="mono" title={key.owner ?? undefined}>
                    {key.owner ? `${key.owner.slice(0, 8)}…${key.owner.slice(-6)}` : "-"}
                  </td>
                  <td>{key.model}</td>
                  <td>{key.status}</td>
                  <td className="num">
                    {key.usedTokens.toLocaleString("en-US")} / {key.totalTokens.toLocaleString("en-US")}
                  </td>
                  <td>{key.lastUsedAt ? key.lastUsedAt.toISOString().slice(0, 16).replace("T", " ") : "never"}</td>
                  <td>
                    {key.status === "active" || key.status === "disabled" ? (
                      <form method="post" action="/operator/keys/revoke">
                        <input type="hidden" name="key" value={key.id} />
                        <button type="submit" className="secondary" aria-label={`Revoke key ${key.id}`}>
                          Revoke
                        </button>
                      </form>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="note">
        A revoked key is refused at once on every instance; its unused tokens stay on record. Codes are never shown.
      </p>
    </section>
  );
}
