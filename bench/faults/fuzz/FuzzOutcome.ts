/** What the loader answered to the generated requests. @internal */
export interface FuzzOutcome {
  /** Requests sent (and answered: a request without an answer in time is DEADLINE_EXCEEDED). */
  requests: number;
  /** Per case kind: requests sent and the statuses seen, by name. */
  byKind: Record<string, { sent: number; statuses: Record<string, number> }>;
  /** Every answer that was not among its case's right statuses (the first 5 of each kind). */
  wrong: {
    kind: string;
    status: string;
    expected: readonly string[];
    details: string;
    note: string;
  }[];
  /** How many answers were wrong in all. */
  wrongCount: number;
}
