import type { FuzzCase } from './FuzzCase.js';
import type { FuzzOutcome } from './FuzzOutcome.js';
import type { RawLoaderClient } from './RawLoaderClient.js';

/**
 * Sends every case through the raw client, `concurrency` at a time, and tallies the statuses
 * per kind against each case's right ones. A stream that serves is cancelled after its first
 * batch (OK); a request not answered within `timeoutMs` comes back DEADLINE_EXCEEDED, which
 * no case allows, so a hang is a wrong answer too.
 *
 * @internal
 */
export async function sendFuzzCases(
  client: RawLoaderClient,
  cases: readonly FuzzCase[],
  options: { concurrency: number; timeoutMs: number; signal?: AbortSignal },
): Promise<FuzzOutcome> {
  const outcome: FuzzOutcome = { requests: 0, byKind: {}, wrong: [], wrongCount: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < cases.length) {
      options.signal?.throwIfAborted();
      const c = cases[next++]!;
      const result =
        c.rpc === 'StreamBatches'
          ? await client.stream(c.body, options.timeoutMs)
          : await client.unary(c.rpc, c.body, options.timeoutMs);
      outcome.requests++;
      const kind = (outcome.byKind[c.kind] ??= { sent: 0, statuses: {} });
      kind.sent++;
      kind.statuses[result.status] = (kind.statuses[result.status] ?? 0) + 1;
      if (!c.expected.includes(result.status)) {
        outcome.wrongCount++;
        if (outcome.wrong.length < 50) {
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
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}
