import type { FuzzCase } from './FuzzCase.js';
import type { RawLoaderClient } from './RawLoaderClient.js';

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

/**
 * Sends every case through the raw clients, one request in flight on each, and tallies the statuses
 * per kind against each case's right ones. A stream that serves is cancelled after its first
 * batch (OK); a request not answered within `timeoutMs` comes back DEADLINE_EXCEEDED, which
 * no case allows, so a hang is a wrong answer too.
 *
 * @internal
 */
export async function sendFuzzCases(
  clients: readonly RawLoaderClient[],
  cases: readonly FuzzCase[],
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    progress?: (done: number, total: number) => void;
  },
): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = { requests: 0, byKind: {}, wrong: [], wrongCount: 0 };
  let next = 0;
  const worker = async (client: RawLoaderClient): Promise<void> => {
    while (next < cases.length) {
      options.signal?.throwIfAborted();
      const c = cases[next++]!;
      const result =
        c.rpc === 'StreamBatches'
          ? await client.stream(c.body, options.timeoutMs)
          : await client.unary(c.rpc, c.body, options.timeoutMs);
      outcome.requests++;
      if (outcome.requests % 100 === 0) options.progress?.(outcome.requests, cases.length);
      const kind = (outcome.byKind[c.kind] ??= { sent: 0, statuses: {} });
      kind.sent++;
      kind.statuses[result.status] = (kind.statuses[result.status] ?? 0) + 1;
      if (!c.expected.includes(result.status)) {
        outcome.wrongCount++;
        if (outcome.wrong.filter((w) => w.kind === c.kind).length < 5) {
          outcome.wrong.push({
            kind: c.kind,
            status: result.status,
            expected: c.expected,
            details: result.details.slice(0, 300),
            note: c.note.slice(0, 300),
          });
        }
      }
    }
  };
  await Promise.all(clients.map(worker));
  return outcome;
}
