import type { BusySubject } from "../limits/limit-log";

/** A rate-limited payer: a prepaid key (its id) or a wallet (and the model it is counted apart for, if any). */
export interface BusyPayer extends Omit<BusySubject, "subject"> {
  kind: "key" | "wallet";
  who: string;
  model?: string;
}

/** How many of the busiest payers the page lists. */
export const BUSIEST_SHOWN = 10;

/** A limits subject (`key:<id>`, `wallet:<address>[:<model>]`) as the page names it. */
export function busyPayer({ subject, ...figures }: BusySubject): BusyPayer {
  const [kind, who = "", ...model] = subject.split(":");
  return {
    kind: kind === "key" ? "key" : "wallet",
    who,
    model: model.length ? model.join(":") : undefined,
    ...figures,
  };
}
