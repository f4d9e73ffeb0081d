/**
 * Entry of an `Offloader` thread: runs one task per message and answers with its output, its
 * large buffers handed back rather than copied, or with the error's name and message.
 * @internal
 */
import { parentPort } from 'node:worker_threads';
import { offloadTask, type OffloadTaskName } from './offloadTasks.js';

/** A task to run, as the `Offloader` posts it. @internal */
export interface OffloadRequest {
  name: OffloadTaskName;
  input: unknown;
}

/** A task's answer. @internal */
export type OffloadReply =
  { ok: true; output: unknown } | { ok: false; error: { name: string; message: string } };

const port = parentPort;
if (port) {
  port.on('message', ({ name, input }: OffloadRequest) => {
    let reply: OffloadReply;
    let move: ArrayBuffer[] = [];
    try {
      const task = offloadTask(name);
      const output = task.run(input);
      move = task.moveOut(output);
      reply = { ok: true, output };
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, error: { name: e.name, message: e.message } };
    }
    port.postMessage(reply, move);
  });
}
