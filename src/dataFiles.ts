// The files of a SQLite deployment's data directory that belong together: the database (with its
// -wal and -shm) and the key files, without which the sealed rows of the database do not open.
import { existsSync, readdirSync } from 'node:fs';
import { generatedKeyFiles } from './config.js';

/**
 * The key files in `dataDirectory`: each one the configuration generates there (config.ts,
 * generatedKeyFiles), and any other `*.key` file beside them (keys kept from a rotation), by name.
 */
export function keyFilesIn(dataDirectory: string): string[] {
  if (!existsSync(dataDirectory)) return [];
  const named = new Set(generatedKeyFiles.map((key) => key.file));
  return readdirSync(dataDirectory)
    .filter((name) => named.has(name) || name.endsWith('.key'))
    .sort();
}

/** The database file and, when present, its -wal and -shm files. */
export function databaseFiles(databasePath: string): string[] {
  return [databasePath, `${databasePath}-wal`, `${databasePath}-shm`].filter((file) => existsSync(file));
}
