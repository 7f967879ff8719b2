import type Database from "better-sqlite3";
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
import { groupCommitOf, type GroupCommit } from "./group-commit";
import type { SqliteDatabase } from "./open-sqlite";

/**
 * The rate limits on SQLite: each admission, end, renewal or return is one statement on its subject's row
 * (rate-limit-sql.ts), one write of the process's group commit (one IMMEDIATE transaction per turn of the event
 * loop: SQLite's single writer, across processes too). A call's end, which nobody waits on, waits up to END_WAIT_MS
 * for the next call's admission to share its commit (ends are queued first, so that admission sees it); meanwhile
 * the ended call still counts as running and its unused tokens as taken: stricter, never looser.
 */
/** How long a call's end waits for company before it commits alone (ms). */
const END_WAIT_MS = 20;

export class SqliteLimitLog implements LimitLog {
  private readonly group: GroupCommit;
  private readonly statements: {
    take: Database.Statement<Record<string, unknown>, LimitRow>;
    end: Database.Statement<Record<string, unknown>>;
    renew: Database.Statement<Record<string, unknown>>;
    busiest: Database.Statement<Record<string, unknown>, Parameters<typeof busySubject>[0]>;
  };

  constructor(database: SqliteDatabase) {
    const client = database.$client;
    this.group = groupCommitOf(client);
    const sql = rateLimitSql((name) => `:${name}`, "max");
    this.statements = {
      take: client.prepare(sql.take()),
      end: client.prepare(sql.end()),
      renew: client.prepare(sql.renew()),
      busiest: client.prepare(sql.busiest()),
    };
  }

  take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken> {
    const step = limitStep(subject, rule, call, windowMs, now);
    return this.group.run(
      () => {
        const row = this.statements.take.get({ ...step, ...firstValues(step) })!;
        return limitTaken(step, row, call.tokens);
      },
      { single: true },
    );
  }

  end(ticket: LimitTicket, tokens: number): Promise<void> {
    const giveBackMs = ticket.msPerToken * Math.max(0, ticket.tokens - tokens);
    return this.finish(ticket, giveBackMs, 0);
  }

  renew(ticket: LimitTicket, leaseUntil: number): Promise<void> {
    return this.group.run(() => void this.statements.renew.run({ ...ticket, leaseUntil }), { single: true });
  }

  give(ticket: LimitTicket): Promise<void> {
    return this.finish(ticket, ticket.tokensMs, ticket.requestMs);
  }

  private finish(ticket: LimitTicket, giveBackMs: number, requestGiveBackMs: number): Promise<void> {
    const values = { subject: ticket.subject, epoch: ticket.epoch, giveBackMs, requestGiveBackMs };
    return this.group.runSoon(() => void this.statements.end.run(values), END_WAIT_MS, { single: true });
  }

  async busiest(hour: number, count: number): Promise<BusySubject[]> {
    return this.statements.busiest.all({ hour, count }).map((row) => busySubject(row, hour));
  }
}
