// The meeting point of a test run's processes for a server they share (PostgreSQL, Redis): the run's
// rendezvous folder (vitest's globalSetup, postgresGlobalSetup.ts), where whichever process asks
// first starts the server and writes where it listens, and the others wait for that file.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * What `start` answered in the process that won the start (`name`.json in `rendezvous`, written whole); its failure,
 * thrown in every process that asks. Waits at most `waitMs` for the winner.
 */
export async function joinOrStart<T>(rendezvous: string, name: string, start: () => Promise<T>, waitMs: number): Promise<T> {
  const file = path.join(rendezvous, `${name}.json`);
  let starter = false;
  try {
    mkdirSync(path.join(rendezvous, `${name}-starting`)); // atomic: exactly one process wins
    starter = true;
  } catch {
    // another test process is starting it
  }
  if (starter) {
    let written: T | { error: string };
    try {
      written = await start();
    } catch (error) {
      written = { error: error instanceof Error ? error.message : String(error) };
    }
    writeFileSync(`${file}.tmp`, JSON.stringify(written));
    renameSync(`${file}.tmp`, file);
  }
  const deadline = Date.now() + waitMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`No ${name} appeared in ${rendezvous} within ${waitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const written = readWritten<T>(file);
  if ('error' in written) throw new Error(written.error);
  return written.location;
}

/** The winner's file: what its start answered, or the message of its failure. */
function readWritten<T>(file: string): { location: T } | { error: string } {
  const written = JSON.parse(readFileSync(file, 'utf8')) as T | { error: string };
  if (typeof written === 'object' && written !== null && 'error' in written) return { error: (written as { error: string }).error };
  return { location: written as T };
}

/** What the winner wrote, for the global teardown; undefined when no process started it (or its start failed). */
export function startedInRendezvous<T>(rendezvous: string, name: string): T | undefined {
  const file = path.join(rendezvous, `${name}.json`);
  if (!existsSync(file)) return undefined;
  const written = readWritten<T>(file);
  return 'error' in written ? undefined : written.location;
}
