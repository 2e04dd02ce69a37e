import { defineConfig } from 'drizzle-kit';

// The PostgreSQL twin of db/drizzle.config.ts: `npm run db:generate` runs both.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/postgres/schema.ts',
  out: './db/postgres/migrations',
});
