import { defineConfig } from 'vitest/config';

// The API suites (one file per operation, and the shared suites) each start the app; run without
// isolation they share one module graph per worker instead of importing the server again per file.
// They keep no state in modules: each file starts its own app over its own database.
const apiSuites = ['test/workPlatform/**/*.test.ts', 'test/portfolio/**/*.test.ts', 'test/shared/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'api', include: apiSuites, isolate: false } },
      { extends: true, test: { name: 'modules', include: ['test/**/*.test.ts'], exclude: apiSuites } },
    ],
  },
});
