import {
  busySubject,
  limitStep,
  limitTaken,
  type BusySubject,
  type LimitLog,
  type LimitRow,
  type LimitRule,
  type LimitTake,
  type LimitTaken,
  type LimitTicket,
} from "../../limits/limit-log";
import { firstValues, rateLimitSql } from "../rate-limit-sql";
import type { PostgresDatabase } from "./open-postgres";

/** Each parameter's type: PostgreSQL infers none from `$1 = 0`, and a fraction of a millisecond is no integer. */
const TYPES: Record<string, string> = { subject: "text", count: "integer", epoch: "integer", hour: "bigint" };

/** The parameters' order in each statement: PostgreSQL numbers them. */
function numbered(order: string[]) {
  return (name: string) => {
    let index = order.indexOf(name);
    if (index < 0) index = order.push(name) - 1;
    return `$${index + 1}::${TYPES[name] ?? "float8"}`;
  };
}

function compiled(pick: "take" | "end" | "renew" | "busiest") {
  const order: string[] = [];
  const text = rateLimitSql(numbered(order), "greatest")[pick]();
  return { text, order };
}

const statements = {
  take: compiled("take"),
  end: compiled("end"),
  renew: compiled("renew"),
  busiest: compiled("busiest"),
};

/**
 * The rate limits on PostgreSQL: each admission, end, renewal or return is one statement on its subject's row
 * (rate-limit-sql.ts), which the row's lock orders among instances; the statements are named, so each connection
 * parses them once.
 */
export class PostgresLimitLog implements LimitLog {
  constructor(private readonly database: PostgresDatabase) {}

  private async run<Row extends object>(pick: keyof typeof statements, values: Record<string, unknown>) {
    const { text, order } = statements[pick];
    const { rows } = await this.database.$client.query<Row>({
      name: `paysvc_rate_limit_${pick}`,
      text,
      values: order.map((name) => values[name]),
    });
    return rows;
  }

  async take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken> {
    const step = limitStep(subject, rule, call, windowMs, now);
    const [row] = await this.run<LimitRow>("take", { ...step, ...firstValues(step) });
    if (!row) throw new Error("the rate limit's admission returned no row");
    return limitTaken(step, numbers(row), call.tokens);
  }

  async end(ticket: LimitTicket, tokens: number): Promise<void> {
    const giveBackMs = ticket.msPerToken * Math.max(0, ticket.tokens - tokens);
    await this.run("end", { subject: ticket.subject, epoch: ticket.epoch, giveBackMs, requestGiveBackMs: 0 });
  }

  async renew(ticket: LimitTicket, leaseUntil: number): Promise<void> {
    await this.run("renew", { subject: ticket.subject, epoch: ticket.epoch, leaseUntil });
  }

  async give(ticket: LimitTicket): Promise<void> {
    const values = { subject: ticket.subject, epoch: ticket.epoch };
    await this.run("end", { ...values, giveBackMs: ticket.tokensMs, requestGiveBackMs: ticket.requestMs });
  }

  async busiest(hour: number, count: number): Promise<BusySubject[]> {
    const rows = await this.run<Parameters<typeof busySubject>[0]>("busiest", { hour, count });
    return rows.map((row) => busySubject(numbers(row), hour));
  }
}

/** A row's bigint and numeric columns as numbers (the driver gives them as strings). */
function numbers<Row extends object>(row: Row): Row {
  return Object.fromEntries(
    Object.entries(row).map(([name, value]) => [
      name,
      typeof value === "string" && name !== "key" ? Number(value) : value,
    ]),
  ) as Row;
}
