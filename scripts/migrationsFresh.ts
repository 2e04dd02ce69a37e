// The committed migrations of both engines are in step with db/schema.ts and with the PostgreSQL
// schema derived from it: drizzle-kit, run on a copy of each migrations folder, writes nothing.
//   npm run check:schema   (after scripts/schemaParity.ts) exit 1 showing the migration it would write.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const engines = [
  { dialect: 'sqlite', schema: 'db/schema.ts', migrations: 'db/migrations' },
  { dialect: 'postgresql', schema: 'db/postgres/schema.ts', migrations: 'db/postgres/migrations' },
];

let stale = 0;
for (const engine of engines) {
  const copy = mkdtempSync(path.join(tmpdir(), 'migrations-fresh-'));
  try {
    cpSync(path.join(root, engine.migrations), copy, { recursive: true });
    const before = new Set(readdirSync(copy));
    // drizzle-kit reads --out relative to the working directory, even when it is absolute.
    const out = path.relative(root, copy);
    execFileSync(path.join(root, 'node_modules/.bin/drizzle-kit'), ['generate', '--dialect', engine.dialect, '--schema', engine.schema, '--out', out], {
      cwd: root,
      stdio: 'pipe',
      // A column change drizzle-kit cannot tell from a rename makes it ask, which nobody answers here.
      timeout: 120_000,
    });
    const written = readdirSync(copy).filter((file) => !before.has(file));
    if (written.length > 0) {
      stale += 1;
      const sql = written.filter((file) => file.endsWith('.sql')).map((file) => readFileSync(path.join(copy, file), 'utf8'));
      process.stderr.write(`${engine.migrations} is behind ${engine.schema}: npm run db:generate would write ${written.join(', ')}:\n${sql.join('\n')}\n`);
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
if (stale > 0) process.exitCode = 1;
else process.stdout.write(`drizzle-kit finds no schema change for ${engines.map((engine) => engine.migrations).join(' or ')}.\n`);
