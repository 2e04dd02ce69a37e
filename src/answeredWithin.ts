// Waiting for an answer at most so long, with the deadline measured fairly. A timer that is due runs
// before the event loop reads its sockets: when the process was busy past the deadline (a long
// synchronous task, a pause for garbage collection, a machine with too few cores), an answer that
// came in time would be called late. So a due deadline first lets the loop read what arrived meanwhile,
// and only then gives up.

export class NoAnswerInTime extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'NoAnswerInTime';
  }
}

/** `work`'s outcome, or NoAnswerInTime when it has none `timeoutMs` after the call; a late outcome of `work` is dropped. */
export function answeredWithin<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      finish();
    };
    // setImmediate runs after the poll phase of the same turn, which reads the sockets that are ready.
    const timer = setTimeout(() => setImmediate(() => settle(() => reject(new NoAnswerInTime(timeoutMs)))), timeoutMs);
    timer.unref();
    work.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}
